import Logging
import PostgresNIO
import RelayCore

/// Read cursors (`read_cursors`), one per user and conversation, only ever moved forward, and the
/// conversation summaries built on them, as SQLite's `ReadCursorQueries`.
///
/// "Events" here are message events (`events.kind` 0): a failed turn is no event a client reads
/// or counts, as in SQLite, where it is kept in `messages` only.
enum PostgresReadCursorQueries {
    /// Moves the user's cursor forward to `seq`, clamped to the conversation's newest event; the
    /// cursor when it moved, nil when it was there or past it already (or there is no event).
    /// The owner's own messages count as read even where the row trails them. One statement
    /// (`relay_mark_read`, migration 11).
    static func markRead(
        _ connection: PostgresConnection,
        _ logger: Logger,
        userID: String,
        conversationID: String,
        seq: Int64,
        at millis: Int64
    ) async throws -> ReadCursor? {
        let rows = try await connection.query(
            "SELECT o_seq, o_ms FROM relay_mark_read(\(userID), \(conversationID), \(seq), \(millis))",
            logger: logger
        )
        var moved: ReadCursor?
        for try await (seq, at) in rows.decode((Int64, Int64).self) {
            moved = ReadCursor(userID: userID, conversationID: conversationID, seq: seq, updatedAt: at)
        }
        return moved
    }

    /// The conversation as `userID` sees it in a list, nil when it does not exist.
    static func summary(
        _ connection: PostgresConnection,
        _ logger: Logger,
        conversationID: String,
        userID: String
    ) async throws
        -> ConversationSummary?
    {
        guard let conversation = try await PostgresConversationQueries.fetch(connection, logger, id: conversationID) else { return nil }
        return try await summaries(connection, logger, of: [conversation], userID: userID).first
    }

    /// The user's conversations (of every protocol) as a list shows them: at most `limit`, the most
    /// recently active first.
    static func summaries(_ connection: PostgresConnection, _ logger: Logger, userID: String, limit: Int) async throws -> [ConversationSummary] {
        let conversations = try await PostgresConversationQueries.list(connection, logger, userID: userID, limit: limit)
        return try await summaries(connection, logger, of: conversations, userID: userID)
    }

    /// Each conversation with its newest event, the user's read cursor (the stored row, or the
    /// user's own newest message after it: sending counts as reading), the
    /// answers and notes after it, and its events in all: two queries whatever the count.
    private static func summaries(
        _ connection: PostgresConnection,
        _ logger: Logger,
        of conversations: [Conversation],
        userID: String
    )
        async throws -> [ConversationSummary]
    {
        let ids = conversations.map(\.id)
        let rows = try await connection.query(
            """
            SELECT ids.id, r.read,
              (SELECT count(*) FROM events WHERE conversation_id = ids.id AND kind = 0 AND role <> 0 AND seq > r.read),
              (SELECT count(*) FROM events WHERE conversation_id = ids.id AND kind = 0)
            FROM unnest(\(ids)::text[]) AS ids(id) CROSS JOIN LATERAL (
              SELECT greatest(
                coalesce((SELECT seq FROM read_cursors WHERE user_id = \(userID) AND conversation_id = ids.id), 0),
                coalesce((SELECT max(seq) FROM events WHERE conversation_id = ids.id AND stream_id = \(userID) AND kind = 0 AND role = 0), 0))
              AS read) r
            """,
            logger: logger
        )
        var counts: [String: (read: Int64, unread: Int64, count: Int64)] = [:]
        for try await (id, read, unread, count) in rows.decode((String, Int64, Int64, Int64).self) { counts[id] = (read, unread, count) }
        let last = try await PostgresEventQueries.lastEvents(connection, logger, conversationIDs: ids)
        return conversations.map { conversation in
            let counted = counts[conversation.id] ?? (0, 0, 0)
            return ConversationSummary(
                conversation: conversation,
                lastEvent: last[conversation.id],
                lastReadSeq: counted.read,
                unreadCount: Int(counted.unread),
                messageCount: Int(counted.count)
            )
        }
    }
}
