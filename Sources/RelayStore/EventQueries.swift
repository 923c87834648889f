import GRDB
import RelayCore

/// What a device gets on reconnect.
public struct ReplayWindow: Sendable, Equatable {
    public var events: [ChatEvent]
    public var truncated: Bool
    /// The cursor was absent or unknown, so the window is the tail of the whole history.
    public var historyReset: Bool
    /// The highest seq in the user's history when the window was read.
    public var highWater: Int64
}

/// The per-user event log.
public enum EventQueries {
    public static func append(
        _ db: Database, userID: String, conversationID: String, role: ChatRole, content: String, deviceID: String?,
        attachmentsJSON: String?, at millis: Int64, id: String = Identifiers.newEventID()
    ) throws -> ChatEvent {
        let seq = (try db.value(Int64.self, "SELECT MAX(seq) FROM events WHERE user_id = ?", [userID]) ?? 0) + 1
        try db.run("""
                INSERT INTO events (user_id, seq, id, conversation, role, content, device_id, attachments, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            [userID, seq, id, conversationID, role.rawValue, content, deviceID, attachmentsJSON, millis])
        return ChatEvent(
            id: id, seq: seq, userID: userID, conversationID: conversationID, role: role, content: content, timestampMillis: millis,
            deviceID: deviceID, attachmentsJSON: attachmentsJSON)
    }

    public static func fetch(_ db: Database, id: String) throws -> ChatEvent? {
        try db.row("SELECT * FROM events WHERE id = ?", [id]).map(event(from:))
    }

    /// The events after `cursor` (an event id), oldest first, at most `limit` (the newest ones).
    public static func replay(_ db: Database, userID: String, after cursor: String?, limit: Int) throws -> ReplayWindow {
        let highWater = try db.value(Int64.self, "SELECT MAX(seq) FROM events WHERE user_id = ?", [userID]) ?? 0
        var afterSeq: Int64 = 0
        var historyReset = true
        if let cursor,
            let seq = try db.value(Int64.self, "SELECT seq FROM events WHERE id = ? AND user_id = ?", [cursor, userID])
        {
            afterSeq = seq
            historyReset = false
        }
        let available = highWater - afterSeq
        let rows = try db.rows("SELECT * FROM events WHERE user_id = ? AND seq > ? ORDER BY seq DESC LIMIT ?", [userID, afterSeq, limit])
        return ReplayWindow(
            events: rows.reversed().map(event(from:)), truncated: available > Int64(limit), historyReset: historyReset,
            highWater: highWater)
    }

    /// The last `limit` events of one conversation, oldest first.
    public static func conversation(_ db: Database, userID: String, conversationID: String, limit: Int) throws -> [ChatEvent] {
        try db.rows(
            "SELECT * FROM events WHERE user_id = ? AND conversation = ? ORDER BY seq DESC LIMIT ?", [userID, conversationID, limit]
        ).reversed().map(event(from:))
    }

    /// How many events a conversation holds.
    public static func count(_ db: Database, conversationID: String) throws -> Int {
        try db.value(Int.self, "SELECT COUNT(*) FROM events WHERE conversation = ?", [conversationID]) ?? 0
    }

    static func event(from row: Row) -> ChatEvent {
        ChatEvent(
            id: row["id"], seq: row["seq"], userID: row["user_id"], conversationID: row["conversation"],
            role: ChatRole(rawValue: row["role"]) ?? .assistant, content: row["content"], timestampMillis: row["created_at"],
            deviceID: row["device_id"], attachmentsJSON: row["attachments"])
    }
}
