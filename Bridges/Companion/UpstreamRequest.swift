import Foundation
import RelayCore
import RelayTransport

/// The frames the upstream client sends, in the iOS app's envelope:
/// `{type, requestId, timestamp, data}`.
enum UpstreamRequest {
    /// What the app subscribes to, plus the events the relay reads; servers do not filter by it.
    static let subscribedEvents = [
        "streamData", "streamComplete", "toolUse", "toolResult", "assistantMessage", "streamChunk", "conversationResult", "error",
    ]

    static func streamStart(requestID: String, workingDirectory: String?, at millis: Int64) -> String {
        var data: [String: JSONValue] = [:]
        if let workingDirectory { data["workingDirectory"] = .string(workingDirectory) }
        return frame("streamStart", requestID: requestID, at: millis, data)
    }

    static func subscribe(requestID: String, sessionIDs: [String], at millis: Int64) -> String {
        frame(
            "subscribe", requestID: requestID, at: millis,
            ["events": .array(subscribedEvents.map(JSONValue.string)), "sessionIds": .array(sessionIDs.map(JSONValue.string))])
    }

    static func claudeCommand(requestID: String, command: String, projectPath: String?, sessionID: String, at millis: Int64) -> String {
        var data: [String: JSONValue] = ["command": .string(command), "sessionId": .string(sessionID)]
        if let projectPath { data["projectPath"] = .string(projectPath) }
        return frame("claudeCommand", requestID: requestID, at: millis, data)
    }

    static func ping(requestID: String, at millis: Int64) -> String {
        frame("ping", requestID: requestID, at: millis, ["timestamp": .string(timestamp(millis))])
    }

    private static func frame(_ type: String, requestID: String, at millis: Int64, _ data: [String: JSONValue]) -> String {
        JSONValue.object([
            "type": .string(type), "requestId": .string(requestID), "timestamp": .string(timestamp(millis)), "data": .object(data),
        ]).encoded()
    }

    /// ISO 8601 UTC with milliseconds, as JavaScript's `toISOString()` writes it.
    static func timestamp(_ millis: Int64) -> String {
        let seconds = Date.ISO8601FormatStyle().format(Date(timeIntervalSince1970: Double(millis / 1000)))
        let fraction = String(millis % 1000)
        return seconds.dropLast() + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }
}

extension ServiceLoop.ClientTarget {
    /// The same server with `token` in the query, as the app sends it (`/ws?token=…`).
    func withToken(_ token: String) -> ServiceLoop.ClientTarget {
        var target = self
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let encoded = token.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
        target.path += (path.contains("?") ? "&" : "?") + "token=" + encoded
        return target
    }
}
