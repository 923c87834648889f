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

    /// A session of our own id: the relay adopts it (or answers with the directory's session), and
    /// the real server needs one.
    static func streamStart(requestID: String, workingDirectory: String?, at millis: Int64) -> String {
        var data: [String: JSONValue] = ["sessionId": .string(Identifiers.newUUID())]
        if let workingDirectory { data["workingDirectory"] = .string(workingDirectory) }
        return frame("streamStart", requestID: requestID, at: millis, data)
    }

    static func subscribe(requestID: String, sessionIDs: [String], at millis: Int64) -> String {
        frame(
            "subscribe",
            requestID: requestID,
            at: millis,
            ["events": .array(subscribedEvents.map(JSONValue.string)), "sessionIds": .array(sessionIDs.map(JSONValue.string))]
        )
    }

    static func claudeCommand(requestID: String, command: String, projectPath: String?, sessionID: String, at millis: Int64) -> String {
        var data: [String: JSONValue] = ["command": .string(command), "sessionId": .string(sessionID)]
        if let projectPath { data["projectPath"] = .string(projectPath) }
        return frame("claudeCommand", requestID: requestID, at: millis, data)
    }

    static func ping(requestID: String, at millis: Int64) -> String {
        frame("ping", requestID: requestID, at: millis, ["timestamp": .string(CompanionWire.timestamp(millis))])
    }

    private static func frame(_ type: String, requestID: String, at millis: Int64, _ data: [String: JSONValue]) -> String {
        JSONValue.object([
            "type": .string(type), "requestId": .string(requestID), "timestamp": .string(CompanionWire.timestamp(millis)), "data": .object(data),
        ]).encoded()
    }
}
