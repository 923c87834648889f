import Foundation
import GRDB
import RelayCore

/// Conversations and the protocol keys that name them.
public enum ConversationQueries {
    /// The conversation `key` names for `userID`, created from `draft` when there is none.
    public static func resolve(
        _ db: Database,
        key: ConversationKey,
        userID: String,
        draft: ConversationDraft,
        at millis: Int64
    ) throws -> Conversation {
        if let id = try conversationID(db, key: key, userID: userID), let existing = try fetch(db, id: id) { return existing }
        var conversation = Conversation(
            id: Conversation.newID(),
            userID: userID,
            title: draft.title,
            backend: draft.backend,
            workingDirectory: draft.workingDirectory,
            createdAt: millis,
            updatedAt: millis,
            keys: [key] + draft.extraKeys
        )
        conversation.settings = draft.settings
        conversation.changeSeq = try SeqQueries.next(db, userID: userID)
        let settings = try settingsJSON(draft.settings)
        try db.run(
            """
            INSERT INTO conversations (id, user_id, title, backend, working_directory, settings, created_at, updated_at, archived, change_seq)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)
            """,
            [
                conversation.id, userID, draft.title, draft.backend, draft.workingDirectory, settings, millis, millis, conversation.changeSeq,
            ]
        )
        for name in [key] + draft.extraKeys { try addKey(db, name, conversationID: conversation.id, userID: userID) }
        return conversation
    }

    public static func conversationID(_ db: Database, key: ConversationKey, userID: String) throws -> String? {
        try db.value(
            String.self,
            "SELECT conversation_id FROM conversation_keys WHERE user_id = ? AND scheme = ? AND key = ?",
            [userID, key.scheme, key.value]
        )
    }

    /// Points `key` at the conversation (replacing where it pointed before).
    public static func addKey(_ db: Database, _ key: ConversationKey, conversationID: String, userID: String) throws {
        try db.run(
            "INSERT OR REPLACE INTO conversation_keys (user_id, scheme, key, conversation_id) VALUES (?, ?, ?, ?)",
            [userID, key.scheme, key.value, conversationID]
        )
    }

    /// Every key of a conversation.
    public static func keys(_ db: Database, conversationID: String) throws -> [ConversationKey] {
        try db.rows("SELECT scheme, key FROM conversation_keys WHERE conversation_id = ? ORDER BY scheme, key", [conversationID])
            .map { ConversationKey($0["scheme"], $0["key"]) }
    }

    public static func fetch(_ db: Database, id: String) throws -> Conversation? {
        guard let row = try db.row("SELECT \(columns) FROM conversations c WHERE id = ?", [id]) else { return nil }
        return try conversation(db, from: row)
    }

    /// A user's conversations, most recently updated first.
    public static func list(_ db: Database, userID: String, limit: Int) throws -> [Conversation] {
        try db.rows("SELECT \(columns) FROM conversations c WHERE user_id = ? ORDER BY active_at DESC, id LIMIT ?", [userID, limit]).map {
            try conversation(db, from: $0)
        }
    }

    /// Every user's conversations, most recently updated first.
    public static func all(_ db: Database, limit: Int) throws -> [Conversation] {
        try db.rows("SELECT \(columns) FROM conversations c ORDER BY active_at DESC, id LIMIT ?", [limit]).map { try conversation(db, from: $0) }
    }

    /// Stores the backend's own session id of a conversation (nil forgets it).
    public static func setBackendSession(_ db: Database, _ session: String?, conversationID: String) throws {
        try db.run("UPDATE conversations SET backend_session = ? WHERE id = ?", [session, conversationID])
    }

    /// A conversation's last activity: the newer of its stored `updated_at` (creation, edits, a
    /// failed turn) and its newest answer or note, which is not written to the row on the hot
    /// path (one scattered page per answer) but read through `events_conversation`.
    static let activeAt = """
        MAX(c.updated_at, COALESCE(
            (SELECT e.created_at FROM events e WHERE e.conversation = c.id AND e.role != 'user' ORDER BY e.seq DESC LIMIT 1), 0))
        """

    /// What every read of a conversation row selects (from `conversations c`).
    static let columns = "c.*, \(activeAt) AS active_at"

    /// Moves the conversation's last activity (a turn that failed: answers move it by existing).
    static func touch(_ db: Database, id: String, at millis: Int64) throws {
        try db.run("UPDATE conversations SET updated_at = ? WHERE id = ?", [millis, id])
    }

    /// A user's conversations changed after `seq` of the user's clock (all of them for 0), oldest change first.
    public static func changed(_ db: Database, userID: String, after seq: Int64) throws -> [Conversation] {
        try db.rows("SELECT \(columns) FROM conversations c WHERE user_id = ? AND change_seq > ? ORDER BY change_seq", [userID, seq])
            .map { try conversation(db, from: $0) }
    }

    /// Applies what `edit` changes (title, archived, backend, settings; `edit` stamps the change
    /// time) and moves the change marker; returns the stored result, or nil when there is no such
    /// conversation.
    public static func update(_ db: Database, id: String, _ edit: (inout Conversation) -> Void) throws -> Conversation? {
        guard var conversation = try fetch(db, id: id) else { return nil }
        edit(&conversation)
        conversation.changeSeq = try SeqQueries.next(db, userID: conversation.userID)
        let settings = try settingsJSON(conversation.settings)
        try db.run(
            """
            UPDATE conversations SET title = ?, backend = ?, archived = ?, archived_at = ?, settings = ?, updated_at = ?, change_seq = ?
            WHERE id = ?
            """,
            [
                conversation.title, conversation.backend, conversation.archived, conversation.archivedAt, settings, conversation.updatedAt,
                conversation.changeSeq, id,
            ]
        )
        return conversation
    }

    /// Deletes the conversation and everything in it: history, message records, keys, queued
    /// events, pending pushes and read cursors. Returns false when there was none.
    public static func delete(_ db: Database, id: String) throws -> Bool {
        guard let conversation = try fetch(db, id: id) else { return false }
        // Its rows hold seqs of the owner's clock, which is recovered from the rows that remain.
        try SeqQueries.persist(db, userID: conversation.userID)
        for sql in [
            // Message records and deliveries first: they are found through the events (a rowid
            // may be reused once its row is gone, so no delivery may outlive its event).
            "DELETE FROM messages WHERE user_event_id IN (SELECT id FROM events WHERE conversation = ?)",
            "DELETE FROM queue_delivered WHERE item_id IN (SELECT rowid FROM events WHERE conversation = ?)",
            "DELETE FROM queue_delivered WHERE item_id IN (SELECT -id FROM queue_items WHERE conversation_id = ?)",
            "DELETE FROM events WHERE conversation = ?", "DELETE FROM queue_items WHERE conversation_id = ?",
            "DELETE FROM conversation_keys WHERE conversation_id = ?",
            "DELETE FROM push_pending WHERE conversation_id = ?", "DELETE FROM read_cursors WHERE conversation_id = ?",
            "DELETE FROM turn_reports WHERE conversation_id = ?", "DELETE FROM approvals WHERE conversation_id = ?",
            "DELETE FROM conversations WHERE id = ?",
        ] {
            try db.run(sql, [id])
        }
        return true
    }

    static func conversation(_ db: Database, from row: Row) throws -> Conversation {
        let id: String = row["id"]
        var conversation = Conversation(
            id: id,
            userID: row["user_id"],
            title: row["title"],
            backend: row["backend"],
            workingDirectory: row["working_directory"],
            backendSession: row["backend_session"],
            createdAt: row["created_at"],
            updatedAt: row["active_at"] ?? row["updated_at"],
            archived: row["archived"],
            keys: try keys(db, conversationID: id)
        )
        conversation.archivedAt = row["archived_at"]
        conversation.changeSeq = row["change_seq"] ?? 0
        if let json: String = row["settings"] {
            conversation.settings = (try? JSONDecoder().decode(ConversationSettings.self, from: Data(json.utf8))) ?? ConversationSettings()
        }
        return conversation
    }

    /// The settings column: NULL while nothing is set, else their JSON (a new setting needs no migration).
    static func settingsJSON(_ settings: ConversationSettings) throws -> String? {
        settings.isDefault ? nil : String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
    }
}
