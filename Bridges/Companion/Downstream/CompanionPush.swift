import CompanionWire
import Foundation
import RelayCore

/// The push a Companion app expects (companion.md, "Queue while away" and "What the real iOS app
/// does"): alert title "Claude Response Ready" (or "🎯 Task Completed" after a long run), body at
/// most 150 characters, `thread-id` = the session id, and the custom fields both at the root
/// (where the app reads `sessionId`, `projectId`, `projectName`, `title`, `body`) and under
/// `payload` (where the guide's client reads them).
enum CompanionPush {
    static let bodyLimit = 150

    static func content(_ notice: PushNotice, _ settings: Pushes.Settings) -> PushContent {
        let push = notice.push
        let conversation = notice.conversation
        let sessionID = conversation?.key(in: CompanionKeys.session) ?? push.conversationID
        let projectPath = conversation?.workingDirectory ?? ""
        let projectName = projectPath.isEmpty ? (conversation?.title ?? notice.backendName) : (projectPath as NSString).lastPathComponent
        let longRun = !push.failed && push.runMillis >= settings.longRunMillis
        let asking = push.kind == .approvalRequested
        let title = asking ? "Approval needed" : push.failed ? "Claude Request Failed" : longRun ? "🎯 Task Completed" : "Claude Response Ready"
        var body =
            asking
            ? push.text : push.count > 1 ? "\(push.count) new messages in \(projectName)" : push.text.trimmingCharacters(in: .whitespacesAndNewlines)
        if body.isEmpty { body = "Claude finished in \(projectName)" }
        if body.count > bodyLimit { body = String(body.prefix(bodyLimit - 1)) + "…" }
        let deepLink = "claude-companion://session/\(sessionID)"
        let fields: [String: JSONValue] = [
            "sessionId": .string(sessionID), "projectId": .string(projectPath), "projectName": .string(projectName), "title": .string(title),
            "body": .string(body), "totalChunks": .int(Int64(push.count)), "timestamp": .string(CompanionTimestamp.string(push.createdAt)),
            "isLongRunningCompletion": .bool(longRun), "deepLink": .string(deepLink),
        ]
        var custom = fields
        custom["payload"] = .object(fields)
        if push.kind == .approvalResolved { return PushContent(title: "", body: "", threadID: sessionID, custom: custom, silent: true) }
        return PushContent(title: title, body: body, threadID: sessionID, custom: custom, link: deepLink)
    }
}
