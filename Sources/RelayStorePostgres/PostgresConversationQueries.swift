import Foundation
import Logging
import PostgresNIO
import RelayCore

/// Conversations and the protocol keys that name them, as `ConversationQueries` keeps them in
/// SQLite. Every change takes a seq of the owner's clock (`changeSeq`) and announces it on
/// `clawrelay_log` in the same transaction, so other nodes hear of it.
enum PostgresConversationQueries {
    /// The conversation `key` names for `userID`, created from `draft` when there is none.
    ///
    /// - Important: run in a transaction. Nodes that resolve the same new key at once get one
    ///   conversation: the key is claimed before anything else is written, and the loser of the
    ///   claim (its insert waits for the winner's commit) returns the winner's conversation.
    static func resolve(
        _ connection: PostgresConnection,
        _ logger: Logger,
        key: ConversationKey,
        userID: String,
        draft: ConversationDraft,
        at millis: Int64
    ) async throws -> Conversation {
        if let existing = try await find(connection, logger, key: key, userID: userID) { return existing }
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
        if try await !claim(connection, logger, key, conversationID: conversation.id, userID: userID) {
            // A new statement sees what the claim waited for.
            if let winner = try await find(connection, logger, key: key, userID: userID) { return winner }
            // The key names a conversation that is gone: this one takes it, as SQLite replaces it.
            try await addKey(connection, logger, key, conversationID: conversation.id, userID: userID)
        }
        conversation.changeSeq = try await takeChangeSeq(connection, logger, userID: userID)
        try await insert(connection, logger, conversation)
        for extra in draft.extraKeys { try await addKey(connection, logger, extra, conversationID: conversation.id, userID: userID) }
        return conversation
    }

    /// The conversation `key` names for `userID`, nil when there is none.
    static func find(_ connection: PostgresConnection, _ logger: Logger, key: ConversationKey, userID: String) async throws -> Conversation? {
        guard let id = try await conversationID(connection, logger, key: key, userID: userID) else { return nil }
        return try await fetch(connection, logger, id: id)
    }

    static func conversationID(_ connection: PostgresConnection, _ logger: Logger, key: ConversationKey, userID: String) async throws -> String? {
        let rows = try await connection.query(
            "SELECT conversation_id FROM conversation_keys WHERE user_id = \(userID) AND scheme = \(key.scheme) AND key = \(key.value)",
            logger: logger
        )
        for try await id in rows.decode(String.self) { return id }
        return nil
    }

    /// Points `key` at the conversation, replacing where it pointed before.
    static func addKey(
        _ connection: PostgresConnection,
        _ logger: Logger,
        _ key: ConversationKey,
        conversationID: String,
        userID: String
    ) async throws {
        try await connection.query(
            """
            INSERT INTO conversation_keys (user_id, scheme, key, conversation_id) VALUES (\(userID), \(key.scheme), \(key.value), \(conversationID))
            ON CONFLICT (user_id, scheme, key) DO UPDATE SET conversation_id = excluded.conversation_id
            """,
            logger: logger
        )
    }

    /// Points `key` at the conversation unless it names one already; true when it now does. An
    /// insert of the same key by a transaction in flight is waited for.
    private static func claim(
        _ connection: PostgresConnection,
        _ logger: Logger,
        _ key: ConversationKey,
        conversationID: String,
        userID: String
    ) async throws -> Bool {
        let rows = try await connection.query(
            """
            INSERT INTO conversation_keys (user_id, scheme, key, conversation_id) VALUES (\(userID), \(key.scheme), \(key.value), \(conversationID))
            ON CONFLICT (user_id, scheme, key) DO NOTHING RETURNING 1
            """,
            logger: logger
        )
        for try await _ in rows.decode(Int32.self) { return true }
        return false
    }

    /// A conversation by id; `locking` holds its row until the transaction ends (for a change
    /// computed from what was read).
    static func fetch(_ connection: PostgresConnection, _ logger: Logger, id: String, locking: Bool = false) async throws -> Conversation? {
        let rows = try await connection.query(
            "SELECT \(unescaped: columns) FROM conversations c WHERE c.id = \(id) \(unescaped: locking ? "FOR UPDATE OF c" : "")",
            logger: logger
        )
        return try await conversations(rows).first
    }

    /// A user's conversations, most recently active first.
    static func list(_ connection: PostgresConnection, _ logger: Logger, userID: String, limit: Int) async throws -> [Conversation] {
        let rows = try await connection.query(
            "SELECT \(unescaped: columns) FROM conversations c WHERE c.user_id = \(userID) ORDER BY 8 DESC, c.id COLLATE \"C\" LIMIT \(limit)",
            logger: logger
        )
        return try await conversations(rows)
    }

    /// A user's conversations changed after `seq` of the user's clock (all of them for 0), oldest change first.
    static func changed(_ connection: PostgresConnection, _ logger: Logger, userID: String, after seq: Int64) async throws -> [Conversation] {
        let rows = try await connection.query(
            "SELECT \(unescaped: columns) FROM conversations c WHERE c.user_id = \(userID) AND c.change_seq > \(seq) ORDER BY c.change_seq",
            logger: logger
        )
        return try await conversations(rows)
    }

    /// Stores the backend's own session id of a conversation (nil forgets it).
    static func setBackendSession(_ connection: PostgresConnection, _ logger: Logger, _ session: String?, conversationID: String) async throws {
        try await connection.query("UPDATE conversations SET backend_session = \(session) WHERE id = \(conversationID)", logger: logger)
    }

    /// Applies what `edit` changes (title, archived, backend, settings; `edit` stamps the change
    /// time) with a new change seq; the stored result, nil when there is no such conversation.
    ///
    /// - Important: run in a transaction (the row stays locked from the read to the write).
    static func update(
        _ connection: PostgresConnection,
        _ logger: Logger,
        id: String,
        _ edit: (inout Conversation) -> Void
    ) async throws -> Conversation? {
        guard var conversation = try await fetch(connection, logger, id: id, locking: true) else { return nil }
        edit(&conversation)
        conversation.changeSeq = try await takeChangeSeq(connection, logger, userID: conversation.userID)
        try await connection.query(
            """
            UPDATE conversations SET title = \(conversation.title), backend = \(conversation.backend), archived = \(conversation.archived),
              archived_ms = \(conversation.archivedAt), settings = \(try settingsJSON(conversation.settings)),
              updated_ms = \(conversation.updatedAt), change_seq = \(conversation.changeSeq)
            WHERE id = \(id)
            """,
            logger: logger
        )
        return conversation
    }

    /// Deletes the conversation and everything in it: its history, message records, turns, keys
    /// and read cursors. False when there was none.
    ///
    /// - Important: run in a transaction. The owner's clock (`streams.last`) is its own row, so
    ///   deleting rows that hold its seqs does not move it back (SQLite had to persist it first).
    static func delete(_ connection: PostgresConnection, _ logger: Logger, id: String) async throws -> Bool {
        let found = try await connection.query("SELECT 1 FROM conversations WHERE id = \(id) FOR UPDATE", logger: logger)
        var exists = false
        for try await _ in found.decode(Int32.self) { exists = true }
        guard exists else { return false }
        try await connection.query("DELETE FROM messages WHERE conversation_id = \(id)", logger: logger)
        try await connection.query("DELETE FROM events WHERE conversation_id = \(id)", logger: logger)
        try await connection.query("DELETE FROM turns WHERE conversation_id = \(id)", logger: logger)
        try await connection.query("DELETE FROM queue_entries WHERE conversation_id = \(id)", logger: logger)
        try await connection.query("DELETE FROM push_pending WHERE conversation_id = \(id)", logger: logger)
        try await connection.query("DELETE FROM turn_reports WHERE conversation_id = \(id)", logger: logger)
        try await connection.query("DELETE FROM approvals WHERE conversation_id = \(id)", logger: logger)
        try await connection.query("DELETE FROM conversation_keys WHERE conversation_id = \(id)", logger: logger)
        try await connection.query("DELETE FROM read_cursors WHERE conversation_id = \(id)", logger: logger)
        try await connection.query("DELETE FROM conversations WHERE id = \(id)", logger: logger)
        return true
    }

    /// Takes the next seq of `userID`'s clock for a conversation change and announces it, so other
    /// nodes' `/sync` readers learn that the stream moved.
    ///
    /// - Important: run in the transaction that stores the change (the announcement is sent at commit).
    static func takeChangeSeq(_ connection: PostgresConnection, _ logger: Logger, userID: String) async throws -> Int64 {
        let seq = try await PostgresMessageQueries.takeSeqs(connection, stream: userID, count: 1, logger: logger)
        try await PostgresMessageQueries.notify(connection, stream: userID, prev: seq - 1, last: seq, logger: logger)
        return seq
    }

    /// Stores a new conversation's row (its keys are stored apart).
    static func insert(_ connection: PostgresConnection, _ logger: Logger, _ conversation: Conversation) async throws {
        try await connection.query(
            """
            INSERT INTO conversations (id, user_id, title, backend, working_directory, settings, created_ms, updated_ms, archived, change_seq)
            VALUES (\(conversation.id), \(conversation.userID), \(conversation.title), \(conversation.backend), \(conversation.workingDirectory),
              \(try settingsJSON(conversation.settings)), \(conversation.createdAt), \(conversation.updatedAt), false, \(conversation.changeSeq))
            """,
            logger: logger
        )
    }

    /// A conversation's last activity: the newer of its stored `updated_ms` (creation, edits) and
    /// its newest answer, note or failure, as SQLite's `ConversationQueries.activeAt` (there a
    /// failure writes `updated_at`; here its `events` row says when).
    private static let activeAt = """
        greatest(c.updated_ms, coalesce((SELECT e.created_ms FROM events e WHERE e.conversation_id = c.id AND e.role IS DISTINCT FROM 0
          ORDER BY e.seq DESC LIMIT 1), 0))
        """

    /// What every read of a conversation selects (from `conversations c`), in `ConversationRow`'s
    /// order; its keys in byte order, as SQLite sorts them.
    static let columns = """
        c.id, c.user_id, c.title, c.backend, c.working_directory, c.backend_session, c.created_ms, \(activeAt), c.archived,
        c.archived_ms, c.change_seq, c.settings,
        ARRAY(SELECT k.scheme FROM conversation_keys k WHERE k.conversation_id = c.id ORDER BY k.scheme COLLATE "C", k.key COLLATE "C"),
        ARRAY(SELECT k.key FROM conversation_keys k WHERE k.conversation_id = c.id ORDER BY k.scheme COLLATE "C", k.key COLLATE "C")
        """

    private typealias ConversationRow = (
        String, String, String?, String?, String?, String?, Int64, Int64, Bool, Int64?, Int64, String?, [String], [String]
    )

    /// The conversations of rows that select `columns`.
    static func conversations(_ rows: PostgresRowSequence) async throws -> [Conversation] {
        var conversations: [Conversation] = []
        for try await row in rows.decode(ConversationRow.self) {
            let (id, userID, title, backend, directory, session, createdAt, activeAt, archived, archivedAt, changeSeq, settings, schemes, keys) =
                row
            var conversation = Conversation(
                id: id,
                userID: userID,
                title: title,
                backend: backend,
                workingDirectory: directory,
                backendSession: session,
                createdAt: createdAt,
                updatedAt: activeAt,
                archived: archived,
                keys: zip(schemes, keys).map { ConversationKey($0, $1) }
            )
            conversation.archivedAt = archivedAt
            conversation.changeSeq = changeSeq
            if let settings {
                conversation.settings = (try? JSONDecoder().decode(ConversationSettings.self, from: Data(settings.utf8))) ?? ConversationSettings()
            }
            conversations.append(conversation)
        }
        return conversations
    }

    /// The settings column: NULL while nothing is set, else their JSON (a new setting needs no migration).
    static func settingsJSON(_ settings: ConversationSettings) throws -> String? {
        settings.isDefault ? nil : String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
    }

    /// Every user's conversations, most recently active first (`clawrelay conversations list`).
    static func all(_ connection: PostgresConnection, _ logger: Logger, limit: Int) async throws -> [Conversation] {
        let rows = try await connection.query(
            "SELECT \(unescaped: columns) FROM conversations c ORDER BY 8 DESC, c.id COLLATE \"C\" LIMIT \(limit)",
            logger: logger
        )
        return try await conversations(rows)
    }
}
