import Logging
import PostgresNIO
import RelayCore

/// A conversation starting afresh or leaving the gateway's list, its history kept.
extension PostgresConversationQueries {
    /// Makes the fresh conversation `ConversationReset.fresh` describes, moves every key to it and
    /// archives the old one, each with a new change seq; nil when there is no such conversation.
    ///
    /// - Important: run in a transaction.
    static func reset(
        _ connection: PostgresConnection,
        _ logger: Logger,
        id: String,
        freshID: String,
        at millis: Int64
    ) async throws
        -> ConversationReset?
    {
        guard let old = try await fetch(connection, logger, id: id, locking: true) else { return nil }
        var fresh = ConversationReset.fresh(from: old, id: freshID, at: millis)
        fresh.changeSeq = try await takeChangeSeq(connection, logger, userID: old.userID)
        try await insert(connection, logger, fresh)
        try await connection.query("UPDATE conversation_keys SET conversation_id = \(freshID) WHERE conversation_id = \(id)", logger: logger)
        let archived = try await archive(connection, logger, ConversationReset.archived(old, at: millis))
        return ConversationReset(old: archived, fresh: fresh)
    }

    /// Takes the conversation's keys of `scheme` off it and archives it; nil when there is none.
    ///
    /// - Important: run in a transaction.
    static func detach(
        _ connection: PostgresConnection,
        _ logger: Logger,
        id: String,
        scheme: String,
        at millis: Int64
    ) async throws
        -> Conversation?
    {
        guard var conversation = try await fetch(connection, logger, id: id, locking: true) else { return nil }
        try await connection.query("DELETE FROM conversation_keys WHERE conversation_id = \(id) AND scheme = \(scheme)", logger: logger)
        conversation.keys.removeAll { $0.scheme == scheme }
        ConversationEdit.archive(true).apply(to: &conversation, at: millis)
        return try await archive(connection, logger, conversation)
    }

    /// Stores an archived conversation's row with a new change seq (its backend session as given:
    /// forgotten by a reset, kept by a detach).
    private static func archive(_ connection: PostgresConnection, _ logger: Logger, _ conversation: Conversation) async throws -> Conversation {
        var stored = conversation
        stored.changeSeq = try await takeChangeSeq(connection, logger, userID: conversation.userID)
        try await connection.query(
            """
            UPDATE conversations SET archived = true, archived_ms = \(stored.archivedAt), updated_ms = \(stored.updatedAt),
              backend_session = \(stored.backendSession), change_seq = \(stored.changeSeq)
            WHERE id = \(stored.id)
            """,
            logger: logger
        )
        return stored
    }
}
