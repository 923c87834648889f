import GRDB
import RelayCore

/// Read cursors (`read_cursors`): one per user and conversation, only ever moved forward.
public enum ReadCursorQueries {
    /// Moves the user's cursor forward to `seq`, clamped to the conversation's newest event.
    /// Returns the cursor when it moved, nil when it was there or past it already (or the
    /// conversation has no event).
    public static func markRead(_ db: Database, userID: String, conversationID: String, seq: Int64, at millis: Int64) throws -> ReadCursor? {
        let newest = try db.value(Int64.self, "SELECT MAX(seq) FROM events WHERE conversation = ?", [conversationID]) ?? 0
        return try advance(db, userID: userID, conversationID: conversationID, seq: min(seq, newest), at: millis)
    }

    /// Moves the cursor forward to `seq` as it is (the caller knows the event exists).
    @discardableResult
    static func advance(_ db: Database, userID: String, conversationID: String, seq: Int64, at millis: Int64) throws -> ReadCursor? {
        try advance(WriterStatements(db), userID: userID, conversationID: conversationID, seq: seq, at: millis)
    }

    /// `advance` through raw statements (the writer's own, or ones made for the caller's connection).
    @discardableResult
    static func advance(_ statements: WriterStatements, userID: String, conversationID: String, seq: Int64, at millis: Int64) throws -> ReadCursor? {
        guard seq > 0 else { return nil }
        try statements.run(.cursorAdvance) {
            $0.bind(1, userID)
            $0.bind(2, conversationID)
            $0.bind(3, seq)
            $0.bind(4, millis)
        }
        guard statements.changes > 0 else { return nil }
        return ReadCursor(userID: userID, conversationID: conversationID, seq: seq, updatedAt: millis)
    }

    /// The user's cursor in the conversation, nil when the user never read it.
    public static func cursor(_ db: Database, userID: String, conversationID: String) throws -> ReadCursor? {
        try db.row("SELECT * FROM read_cursors WHERE user_id = ? AND conversation_id = ?", [userID, conversationID]).map { row in
            ReadCursor(userID: row["user_id"], conversationID: row["conversation_id"], seq: row["seq"], updatedAt: row["updated_at"])
        }
    }

    /// The conversation as `userID` sees it in a list, nil when it does not exist.
    public static func summary(_ db: Database, conversationID: String, userID: String) throws -> ConversationSummary? {
        guard let conversation = try ConversationQueries.fetch(db, id: conversationID) else { return nil }
        return try summary(db, of: conversation, userID: userID)
    }

    /// The user's conversations (of every protocol) as a list shows them: at most `limit`, the most
    /// recently updated first.
    public static func summaries(_ db: Database, userID: String, limit: Int) throws -> [ConversationSummary] {
        try ConversationQueries.list(db, userID: userID, limit: limit).map { try summary(db, of: $0, userID: userID) }
    }

    static func summary(_ db: Database, of conversation: Conversation, userID: String) throws -> ConversationSummary {
        let last = try EventQueries.last(db, conversationID: conversation.id)
        let read = try cursor(db, userID: userID, conversationID: conversation.id)?.seq ?? 0
        let unread =
            try db.value(Int.self, "SELECT COUNT(*) FROM events WHERE conversation = ? AND seq > ? AND role != 'user'", [conversation.id, read])
            ?? 0
        return ConversationSummary(
            conversation: conversation,
            lastEvent: last,
            lastReadSeq: read,
            unreadCount: unread,
            messageCount: try EventQueries.count(db, conversationID: conversation.id)
        )
    }
}
