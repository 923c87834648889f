import GRDB
import RelayCore

/// Read cursors (`read_cursors`): one per user and conversation, only ever moved forward.
public enum ReadCursorQueries {
    /// Moves the user's cursor forward to `seq`, clamped to the conversation's newest event.
    /// Returns the cursor when it moved, nil when it was there or past it already (or the
    /// conversation has no event).
    public static func markRead(_ db: Database, userID: String, conversationID: String, seq: Int64, at millis: Int64) throws -> ReadCursor? {
        let newest = try db.value(Int64.self, "SELECT MAX(seq) FROM events WHERE conversation = ?", [conversationID]) ?? 0
        let target = min(seq, newest)
        // The owner's own messages count as read even where the row trails them.
        if let current = try cursor(db, userID: userID, conversationID: conversationID), current.seq >= target {
            try advance(db, userID: userID, conversationID: conversationID, seq: current.seq, at: current.updatedAt)
            return nil
        }
        return try advance(db, userID: userID, conversationID: conversationID, seq: target, at: millis)
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

    /// How long the stored cursor of a conversation's owner may trail the owner's own newest
    /// message in it: sending moves it (`advanceOnSend`), but writing it on every message cost
    /// a scattered page each; reads add the messages sent since (`cursor`).
    static let sendLagMillis: Int64 = 1_000

    /// Moves the sender's cursor to its own new message. For the conversation's owner the row is
    /// written at most once per `sendLagMillis` by the store writer (whose statements remember
    /// when), since reads find the owner's newer messages in the history; anyone else's is
    /// written every time.
    static func advanceOnSend(_ statements: WriterStatements, _ message: UserMessage, seq: Int64, at millis: Int64) throws {
        let key = statements.cursorKey(userID: message.senderID, conversationID: message.conversationID)
        if message.senderID == message.userID, let written = statements.cursorsWritten[key], (0..<sendLagMillis).contains(millis - written) { return }
        try advance(statements, userID: message.senderID, conversationID: message.conversationID, seq: seq, at: millis)
        statements.noteCursorWritten(key, at: millis, keepingFor: sendLagMillis)
    }

    /// The user's cursor in the conversation, nil when the user never read it: the stored row,
    /// or the owner's own newest message after it (what `advanceOnSend` did not write).
    public static func cursor(_ db: Database, userID: String, conversationID: String) throws -> ReadCursor? {
        let stored = try db.row("SELECT * FROM read_cursors WHERE user_id = ? AND conversation_id = ?", [userID, conversationID]).map { row in
            ReadCursor(userID: row["user_id"], conversationID: row["conversation_id"], seq: row["seq"], updatedAt: row["updated_at"])
        }
        // Events of a conversation carry its owner's id, so this finds nothing for anyone else.
        let sent = try db.row(
            "SELECT seq, created_at FROM events WHERE conversation = ? AND user_id = ? AND role = 'user' AND seq > ? ORDER BY seq DESC LIMIT 1",
            [conversationID, userID, stored?.seq ?? 0]
        )
        guard let sent else { return stored }
        return ReadCursor(userID: userID, conversationID: conversationID, seq: sent["seq"], updatedAt: sent["created_at"])
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
