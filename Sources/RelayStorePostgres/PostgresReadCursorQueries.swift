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
    static func markRead(
        _ connection: PostgresConnection,
        _ logger: Logger,
        userID: String,
        conversationID: String,
        seq: Int64,
        at millis: Int64
    ) async throws -> ReadCursor? {
        let rows = try await connection.query("SELECT max(seq) FROM events WHERE conversation_id = \(conversationID) AND kind = 0", logger: logger)
        var newest: Int64 = 0
        for try await value in rows.decode(Int64?.self) { newest = value ?? 0 }
        let target = min(seq, newest)
        // The owner's own messages count as read even where the row trails them.
        if let current = try await cursor(connection, logger, userID: userID, conversationID: conversationID), current.seq >= target {
            try await advance(connection, logger, userID: userID, conversationID: conversationID, seq: current.seq, at: current.updatedAt)
            return nil
        }
        return try await advance(connection, logger, userID: userID, conversationID: conversationID, seq: target, at: millis)
    }

    /// Moves the stored cursor forward to `seq`; the cursor when the row moved.
    @discardableResult
    static func advance(
        _ connection: PostgresConnection,
        _ logger: Logger,
        userID: String,
        conversationID: String,
        seq: Int64,
        at millis: Int64
    ) async throws -> ReadCursor? {
        guard seq > 0 else { return nil }
        let rows = try await connection.query(
            """
            INSERT INTO read_cursors AS r (user_id, conversation_id, seq, updated_ms) VALUES (\(userID), \(conversationID), \(seq), \(millis))
            ON CONFLICT (user_id, conversation_id) DO UPDATE SET seq = excluded.seq, updated_ms = excluded.updated_ms WHERE excluded.seq > r.seq
            RETURNING 1
            """,
            logger: logger
        )
        var moved = false
        for try await _ in rows.decode(Int32.self) { moved = true }
        return moved ? ReadCursor(userID: userID, conversationID: conversationID, seq: seq, updatedAt: millis) : nil
    }

    /// The user's cursor in the conversation, nil when the user never read it: the stored row, or
    /// the user's own newest message after it (sending counts as reading, whether or not the
    /// writes moved the row).
    static func cursor(_ connection: PostgresConnection, _ logger: Logger, userID: String, conversationID: String) async throws -> ReadCursor? {
        let stored = try await connection.query(
            "SELECT seq, updated_ms FROM read_cursors WHERE user_id = \(userID) AND conversation_id = \(conversationID)",
            logger: logger
        )
        var cursor: ReadCursor?
        for try await (seq, updatedAt) in stored.decode((Int64, Int64).self) {
            cursor = ReadCursor(userID: userID, conversationID: conversationID, seq: seq, updatedAt: updatedAt)
        }
        // Events of a conversation are in its owner's stream, so this finds nothing for anyone else.
        let sent = try await connection.query(
            """
            SELECT seq, created_ms FROM events
            WHERE conversation_id = \(conversationID) AND stream_id = \(userID) AND kind = 0 AND role = 0 AND seq > \(cursor?.seq ?? 0)
            ORDER BY seq DESC LIMIT 1
            """,
            logger: logger
        )
        for try await (seq, createdAt) in sent.decode((Int64, Int64).self) {
            cursor = ReadCursor(userID: userID, conversationID: conversationID, seq: seq, updatedAt: createdAt)
        }
        return cursor
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

    /// Each conversation with its newest event, the user's read cursor (as `cursor` finds it), the
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
