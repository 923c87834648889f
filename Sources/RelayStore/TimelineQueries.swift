import GRDB
import RelayCore

/// The timeline over `events` and `messages`: every row has a seq of its user's clock.
public enum TimelineQueries {
    /// The user's entries after `seq`, oldest first, at most `limit` and about `byteBudget` bytes
    /// of content (always at least one entry), read a page at a time so a history of large
    /// messages is never read whole; `more` tells whether entries after these were left out.
    public static func after(
        _ db: Database,
        userID: String,
        seq: Int64,
        limit: Int,
        byteBudget: Int = .max
    ) throws -> (
        entries: [TimelineEntry], more: Bool
    ) {
        var entries: [TimelineEntry] = []
        var bytes = 0
        var cursor = seq
        while true {
            let page = try db.rows(
                union(events: "e.user_id = :user AND e.seq > :seq", messages: "m.user_id = :user", seqAbove: ":seq") + " ORDER BY seq LIMIT :limit",
                ["user": userID, "seq": cursor, "limit": pageSize]
            ).map(entry(from:))
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
    public static func page(
        _ db: Database,
        userID: String,
        conversationID: String,
        before seq: Int64?,
        limit: Int,
        byteBudget: Int = .max
    ) throws -> (entries: [TimelineEntry], hasMore: Bool) {
        let rows = try db.rows(
            "SELECT * FROM ("
                + union(
                    events: "e.user_id = :user AND e.conversation = :conversation",
                    messages: "m.user_id = :user AND m.conversation_id = :conversation",
                    seqAbove: "0"
                )
                + ") WHERE seq < :before ORDER BY seq DESC LIMIT :limit",
            ["user": userID, "conversation": conversationID, "before": seq ?? Int64.max, "limit": limit + 1]
        )
        var newest: [TimelineEntry] = []
        var bytes = 0
        for row in rows.prefix(limit) {
            let entry = entry(from: row)
            guard newest.isEmpty || bytes + entry.content.utf8.count <= byteBudget else { break }
            newest.append(entry)
            bytes += entry.content.utf8.count
        }
        return (newest.reversed(), rows.count > newest.count)
    }

    /// The newest stored event of each of the given conversations.
    public static func lastEvents(_ db: Database, conversationIDs: [String]) throws -> [String: ChatEvent] {
        var last: [String: ChatEvent] = [:]
        for id in conversationIDs {
            last[id] = try EventQueries.last(db, conversationID: id)
        }
        return last
    }

    /// Stored events, placeholders of running answers, and failed answers, with one column set.
    private static func union(events: String, messages: String, seqAbove: String) -> String {
        """
        SELECT e.id AS id, m.client_id AS client_id, e.conversation AS conversation_id, e.role AS role, e.content AS content,
               'complete' AS status, NULL AS error, e.seq AS seq, e.created_at AS created_at, e.created_at AS completed_at
        FROM events e LEFT JOIN messages m ON m.user_event_id = e.id WHERE \(events)
        UNION ALL
        SELECT m.assistant_event_id, NULL, m.conversation_id, 'assistant', '', 'pending', NULL, m.answer_seq, m.created_at, NULL
        FROM messages m WHERE \(messages) AND m.streaming = 1 AND m.answer_seq > \(seqAbove) AND m.assistant_event_id IS NOT NULL
        UNION ALL
        SELECT m.assistant_event_id, NULL, m.conversation_id, 'assistant', '', 'error', m.reason, m.ended_seq, m.created_at, m.ended_at
        FROM messages m WHERE \(messages) AND m.ended_seq > \(seqAbove) AND m.assistant_event_id IS NOT NULL
        """
    }

    private static func entry(from row: Row) -> TimelineEntry {
        TimelineEntry(
            id: row["id"],
            clientID: row["client_id"],
            conversationID: row["conversation_id"],
            role: ChatRole(rawValue: row["role"]) ?? .assistant,
            content: row["content"],
            status: TimelineEntry.Status(rawValue: row["status"]) ?? .complete,
            error: row["error"],
            seq: row["seq"],
            createdAt: row["created_at"],
            completedAt: row["completed_at"]
        )
    }
}
