import CompanionWire
import Foundation
import RelayCore

/// The one push that carries a turn's answer to the newest (HTTP) Companion app, which has no other
/// way to get it (companion-http.md §4 and §9): an alert the app leaves in Notification Center
/// **and** `content-available`, no collapse id, the answer's fields at the root. The text goes
/// inline when the whole payload fits APNs' 4,096 bytes; else `message: ""`, `requiresFetch:
/// true` and a `messageId` the app fetches (`GET /api/messages/:id`). Failures and empty answers
/// end with such a push too: nothing else clears the app's "thinking" state.
enum CompanionAnswerPush {
    static let maxPayloadBytes = 4_096
    static let bodyLimit = 150

    struct Answer {
        var text: String
        /// The stored answer's id (fetchable), or a fresh one for a failure (never reused).
        var messageID: String
        var fetchable: Bool
        var projectPath: String
        var sessionID: String
        var requestID: String
        var timestampMillis: Int64
    }

    static func content(_ answer: Answer) -> PushContent {
        let alertBody = alertText(answer.text)
        var custom: [String: JSONValue] = [
            "message": .string(answer.text), "projectPath": .string(answer.projectPath), "sessionId": .string(answer.sessionID),
            "claudeSessionId": .string(answer.sessionID), "requestId": .string(answer.requestID), "correlationId": .string(answer.requestID),
            "messageId": .string(answer.messageID), "requiresFetch": .bool(false),
            "timestamp": .string(CompanionTimestamp.string(answer.timestampMillis)),
            "type": .string("message"), "deliveryMethod": .string("apns_message"), "messagePreview": .string(alertBody),
        ]
        if answer.fetchable && size(custom, body: alertBody, threadID: answer.projectPath) > maxPayloadBytes {
            custom["message"] = .string("")
            custom["requiresFetch"] = .bool(true)
            custom["preview"] = .string(String(answer.text.prefix(100)))
        }
        var content = PushContent(title: "Claude Response", body: alertBody, threadID: answer.projectPath, custom: custom, category: "CLAUDE_MESSAGE")
        content.subtitle = answer.projectPath
        content.wakesApp = true
        content.collapses = false
        return content
    }

    /// The payload's size as APNs counts it (UTF-8 bytes of the JSON).
    static func size(_ custom: [String: JSONValue], body: String, threadID: String) -> Int {
        var root = custom
        root["aps"] = .object([
            "alert": .object(["title": .string("Claude Response"), "subtitle": .string(threadID), "body": .string(body)]),
            "sound": .string("default"), "content-available": .int(1), "category": .string("CLAUDE_MESSAGE"), "thread-id": .string(threadID),
        ])
        return JSONValue.object(root).encoded().utf8.count
    }

    /// The alert's body: the text without Markdown, on one line, at most 150 characters with the ellipsis.
    static func alertText(_ text: String) -> String {
        var plain = text.replacingOccurrences(of: "```[\\s\\S]*?(```|$)", with: " [code block] ", options: .regularExpression)
        plain = plain.replacingOccurrences(of: "\\[([^\\]]*)\\]\\([^)]*\\)", with: "$1", options: .regularExpression)
        plain = plain.replacingOccurrences(of: "(?m)^\\s{0,3}(#{1,6}|>|[-*+]|\\d+\\.)\\s+", with: "", options: .regularExpression)
        plain = plain.replacingOccurrences(of: "[*_`~]", with: "", options: .regularExpression)
        plain = plain.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard plain.count > bodyLimit else { return plain.isEmpty ? "New message" : plain }
        // At a word's end when one ends in the last third, else mid-word.
        let cut = plain.prefix(bodyLimit - 1)
        let atWord = cut.lastIndex(of: " ").map { cut[..<$0] } ?? cut
        return String(atWord.count >= bodyLimit * 2 / 3 ? atWord : cut) + "…"
    }
}
