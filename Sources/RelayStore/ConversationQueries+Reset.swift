import GRDB
import RelayCore

/// A conversation starting afresh or leaving the gateway's list, its history kept.
extension ConversationQueries {
    /// Makes the fresh conversation `ConversationReset.fresh` describes, moves every key to it and
    /// archives the old one, each with a new change seq; nil when there is no such conversation.
    public static func reset(_ db: Database, id: String, freshID: String, at millis: Int64) throws -> ConversationReset? {
        guard let old = try fetch(db, id: id) else { return nil }
        var fresh = ConversationReset.fresh(from: old, id: freshID, at: millis)
        fresh.changeSeq = try SeqQueries.next(db, userID: old.userID)
        let settings = try settingsJSON(fresh.settings)
        try db.run(
            """
            INSERT INTO conversations (id, user_id, title, backend, working_directory, settings, created_at, updated_at, archived, change_seq)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)
            """,
            [
                fresh.id, fresh.userID, fresh.title, fresh.backend, fresh.workingDirectory, settings, millis, millis, fresh.changeSeq,
            ]
        )
        try db.run("UPDATE conversation_keys SET conversation_id = ? WHERE conversation_id = ?", [fresh.id, id])
        let archived = try archive(db, ConversationReset.archived(old, at: millis))
        return ConversationReset(old: archived, fresh: fresh)
    }

    /// Takes the conversation's keys of `scheme` off it and archives it; nil when there is none.
    public static func detach(_ db: Database, id: String, scheme: String, at millis: Int64) throws -> Conversation? {
        guard var conversation = try fetch(db, id: id) else { return nil }
        try db.run("DELETE FROM conversation_keys WHERE conversation_id = ? AND scheme = ?", [id, scheme])
        conversation.keys.removeAll { $0.scheme == scheme }
        ConversationEdit.archive(true).apply(to: &conversation, at: millis)
        return try archive(db, conversation)
    }

    /// Stores an archived conversation's row with a new change seq (its backend session forgotten).
    private static func archive(_ db: Database, _ conversation: Conversation) throws -> Conversation {
        var stored = conversation
        stored.changeSeq = try SeqQueries.next(db, userID: conversation.userID)
        try db.run(
            "UPDATE conversations SET archived = 1, archived_at = ?, updated_at = ?, backend_session = ?, change_seq = ? WHERE id = ?",
            [stored.archivedAt, stored.updatedAt, stored.backendSession, stored.changeSeq, stored.id]
        )
        return stored
    }
}
