import Foundation
import RelayCore
import RelayTesting
import Testing

/// The app's local store as its `ChatViewModel` and `SyncEngine` keep it (timrudolph/discoclaw
/// `client/` at 871a5d7): a row per message id and the sync cursor. The sender inserts the
/// answer's row only after decoding the `POST` reply (`confirmOptimistic`, then
/// `saveIfAbsent`); until then `message.delta` and `message.complete` change no row, yet move the
/// cursor to their seq. `message.error` upserts; `conversation.updated` syncs from the cursor.
final class DiscoClawAppModel {
    struct Row: Equatable {
        var status: String
        var content: String
    }

    let device: AppDevice
    let socket: TestSocket
    private(set) var rows: [String: Row] = [:]
    private(set) var cursor: Int64 = 0
    /// Replies to `POST`s the app has not acted on yet, oldest first.
    private var unacted: [JSONValue] = []

    init(_ device: AppDevice) {
        self.device = device
        socket = device.socket()
    }

    /// The user sends `text`: the request goes out and its reply arrives, but the app has not
    /// inserted its rows yet (`insertRows`).
    func send(_ text: String, in conversationID: String) throws -> String {
        let reply = try device.post(text, in: conversationID)
        unacted.append(reply)
        return try #require(reply["assistantMessageId"]?.stringValue)
    }

    /// The app has decoded the oldest reply and written its two rows.
    func insertRows() throws {
        let reply = unacted.removeFirst()
        let userID = try #require(reply["id"]?.stringValue)
        rows[userID] = rows[userID] ?? Row(status: "complete", content: "")
        let answerID = try #require(reply["assistantMessageId"]?.stringValue)
        if rows[answerID] == nil { rows[answerID] = Row(status: "streaming", content: "") }
    }

    /// Handles every event its socket has received, in order, as `SyncEngine.applyEvent` does.
    func readEvents() throws {
        for event in socket.readJSON() {
            let id = event["messageId"]?.stringValue ?? ""
            switch event["type"]?.stringValue {
            case "message.delta":
                rows[id]?.content += event["delta"]?.stringValue ?? ""
                advance(to: event["seq"]?.intValue)
            case "message.complete":
                if let row = rows[id], row.status != "error" { rows[id] = Row(status: "complete", content: event["content"]?.stringValue ?? "") }
                advance(to: event["seq"]?.intValue)
            case "message.error":
                rows[id] = Row(status: "error", content: rows[id]?.content ?? "")
            case "conversation.updated":
                try sync()
            default:
                break
            }
        }
    }

    /// `GET /sync?since=<cursor>`: every message returned is upserted.
    func sync() throws {
        let page = try device.sync(since: cursor)
        for message in page["messages"]?.arrayValue ?? [] {
            guard let id = message["id"]?.stringValue else { continue }
            rows[id] = Row(status: message["status"]?.stringValue ?? "", content: message["content"]?.stringValue ?? "")
        }
        advance(to: page["cursor"]?.intValue)
    }

    private func advance(to seq: Int64?) { cursor = max(cursor, seq ?? cursor) }
}
