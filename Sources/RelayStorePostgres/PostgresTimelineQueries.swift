import Logging
import PostgresNIO
import RelayCore

/// The timeline over `events` and `messages`, as SQLite's `TimelineQueries`: every entry has a seq
/// of its stream's clock. Entries are message events (`complete`), placeholders of answers still
/// running (`pending`, at the answer slot `messages.answer_seq`) and turns that ended without an
/// answer (`error`, at the seq of their kind-1 event, under the id the answer would have had).
enum PostgresTimelineQueries {
    /// The user's entries after `seq`, oldest first, at most `limit` and about `byteBudget` bytes
    /// of content (always at least one entry), read a page at a time so a history of large
    /// messages is never read whole; `more` tells whether entries after these were left out.
    static func after(
        _ connection: PostgresConnection,
        _ logger: Logger,
        userID: String,
        seq: Int64,
        limit: Int,
        byteBudget: Int
    ) async throws -> (entries: [TimelineEntry], more: Bool) {
        var entries: [TimelineEntry] = []
        var bytes = 0
        var cursor = seq
        while true {
            var binds = PostgresBindings()
            binds.append(userID)
            binds.append(cursor)
            binds.append(pageSize)
            let sql = union(events: "e.stream_id = $1 AND e.seq > $2", messages: "m.stream_id = $1", seqAbove: "$2") + " ORDER BY seq LIMIT $3"
            let page = try await decodeEntries(connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger))
            for entry in page {
                let size = entry.content.utf8.count
                guard entries.count < limit, entries.isEmpty || bytes + size <= byteBudget else { return (entries, true) }
                entries.append(entry)
                bytes += size
            }
            guard page.count == pageSize, let last = page.last else { return (entries, false) }
            cursor = last.seq
        }
    }

    /// Rows read per query while a budget is filled.
    static let pageSize = 100

    /// The newest `limit` entries of a conversation before `seq` (all when nil) that fit in about
    /// `byteBudget` bytes of content (at least one), oldest first, and whether older ones exist.
    static func page(
        _ connection: PostgresConnection,
        _ logger: Logger,
        userID: String,
        conversationID: String,
        before seq: Int64?,
        limit: Int,
        byteBudget: Int
    ) async throws -> TimelinePage {
        var binds = PostgresBindings()
        binds.append(userID)
        binds.append(conversationID)
        binds.append(seq ?? Int64.max)
        binds.append(limit + 1)
        let sql =
            "SELECT * FROM ("
            + union(
                events: "e.stream_id = $1 AND e.conversation_id = $2",
                messages: "m.stream_id = $1 AND m.conversation_id = $2",
                seqAbove: "0"
            )
            + ") t WHERE seq < $3 ORDER BY seq DESC LIMIT $4"
        let rows = try await decodeEntries(connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger))
        var newest: [TimelineEntry] = []
        var bytes = 0
        for entry in rows.prefix(limit) {
            guard newest.isEmpty || bytes + entry.content.utf8.count <= byteBudget else { break }
            newest.append(entry)
            bytes += entry.content.utf8.count
        }
        return TimelinePage(entries: newest.reversed(), hasMore: rows.count > newest.count)
    }

    /// Message events, placeholders of running answers, and failed answers, with one column set
    /// (`events e` and `messages m` filtered by the given conditions). A user message's client id
    /// comes from its message record, found by its turn.
    private static func union(events: String, messages: String, seqAbove: String) -> String {
        """
        SELECT e.id AS id, m.client_id AS client_id, e.conversation_id AS conversation_id, e.role AS role, e.content AS content,
               'complete' AS status, NULL::text AS error, e.seq AS seq, e.created_ms AS created_ms, e.created_ms AS completed_ms
        FROM events e LEFT JOIN messages m ON e.role = 0 AND m.run_id = e.run_id AND m.user_event_id = e.id WHERE e.kind = 0 AND \(events)
        UNION ALL
        SELECT m.answer_event_id, NULL, m.conversation_id, 1::smallint, '', 'pending', NULL, m.answer_seq, m.created_ms, NULL
        FROM messages m WHERE \(messages) AND m.state = 1 AND m.answer_seq > \(seqAbove) AND m.answer_event_id IS NOT NULL
        UNION ALL
        SELECT m.answer_event_id, NULL, e.conversation_id, 1::smallint, '', 'error', coalesce(m.reason, e.content), e.seq, m.created_ms,
               coalesce(m.ended_ms, e.created_ms)
        FROM events e JOIN messages m ON m.run_id = e.run_id WHERE e.kind = 1 AND \(events) AND m.answer_event_id IS NOT NULL
        """
    }

    private static func decodeEntries(_ rows: PostgresRowSequence) async throws -> [TimelineEntry] {
        var entries: [TimelineEntry] = []
        for try await row in rows.decode((String, String?, String, Int16?, String?, String, String?, Int64, Int64, Int64?).self) {
            let (id, clientID, conversationID, role, content, status, error, seq, createdAt, completedAt) = row
            entries.append(
                TimelineEntry(
                    id: id,
                    clientID: clientID,
                    conversationID: conversationID,
                    role: role == 0 ? .user : .assistant,
                    content: content ?? "",
                    status: TimelineEntry.Status(rawValue: status) ?? .complete,
                    error: error,
                    seq: seq,
                    createdAt: createdAt,
                    completedAt: completedAt
                )
            )
        }
        return entries
    }
}
