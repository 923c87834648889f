import GRDB
import RelayCore

/// Conversations and the protocol keys that name them.
public enum ConversationQueries {
    /// The conversation `key` names for `userID`, created from `draft` when there is none.
    public static func resolve(_ db: Database, key: ConversationKey, userID: String, draft: ConversationDraft, at millis: Int64) throws -> Conversation {
        if let id = try conversationID(db, key: key, userID: userID), let existing = try fetch(db, id: id) { return existing }
        let conversation = Conversation(
            id: Conversation.newID(), userID: userID, title: draft.title, backend: draft.backend, workingDirectory: draft.workingDirectory,
            createdAt: millis, updatedAt: millis, keys: [key] + draft.extraKeys)
        try db.run(
            """
            INSERT INTO conversations (id, user_id, title, backend, working_directory, created_at, updated_at, archived)
            VALUES (?, ?, ?, ?, ?, ?, ?, 0)
            """,
            [conversation.id, userID, draft.title, draft.backend, draft.workingDirectory, millis, millis])
        for name in [key] + draft.extraKeys { try addKey(db, name, conversationID: conversation.id, userID: userID) }
        return conversation
    }

    public static func conversationID(_ db: Database, key: ConversationKey, userID: String) throws -> String? {
        try db.value(String.self, "SELECT conversation_id FROM conversation_keys WHERE user_id = ? AND scheme = ? AND key = ?", [userID, key.scheme, key.value])
    }

    /// Points `key` at the conversation (replacing where it pointed before).
    public static func addKey(_ db: Database, _ key: ConversationKey, conversationID: String, userID: String) throws {
        try db.run(
            "INSERT OR REPLACE INTO conversation_keys (user_id, scheme, key, conversation_id) VALUES (?, ?, ?, ?)",
            [userID, key.scheme, key.value, conversationID])
    }

    /// Every key of a conversation.
    public static func keys(_ db: Database, conversationID: String) throws -> [ConversationKey] {
        try db.rows("SELECT scheme, key FROM conversation_keys WHERE conversation_id = ? ORDER BY scheme, key", [conversationID])
            .map { ConversationKey($0["scheme"], $0["key"]) }
    }

    public static func fetch(_ db: Database, id: String) throws -> Conversation? {
        guard let row = try db.row("SELECT * FROM conversations WHERE id = ?", [id]) else { return nil }
        return try conversation(db, from: row)
    }

    /// A user's conversations, most recently updated first.
    public static func list(_ db: Database, userID: String, limit: Int) throws -> [Conversation] {
        try db.rows("SELECT * FROM conversations WHERE user_id = ? ORDER BY updated_at DESC, id LIMIT ?", [userID, limit]).map { try conversation(db, from: $0) }
    }

    /// Stores the backend's own session id of a conversation (nil forgets it).
    public static func setBackendSession(_ db: Database, _ session: String?, conversationID: String) throws {
        try db.run("UPDATE conversations SET backend_session = ? WHERE id = ?", [session, conversationID])
    }

    /// Moves the conversation's last activity; called once per turn, when it ends, not per event.
    static func touch(_ db: Database, id: String, at millis: Int64) throws {
        try db.run("UPDATE conversations SET updated_at = ? WHERE id = ?", [millis, id])
    }

    static func conversation(_ db: Database, from row: Row) throws -> Conversation {
        let id: String = row["id"]
        return Conversation(
            id: id, userID: row["user_id"], title: row["title"], backend: row["backend"], workingDirectory: row["working_directory"],
            backendSession: row["backend_session"], createdAt: row["created_at"], updatedAt: row["updated_at"], archived: row["archived"],
            keys: try keys(db, conversationID: id))
    }
}
