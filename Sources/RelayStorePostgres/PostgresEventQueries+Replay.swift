import Logging
import PostgresNIO
import RelayCore

/// Replay windows over several streams (a user and the shared audiences its device hears).
///
/// SQLite merges the streams in insertion order (its rowid). PostgreSQL has no such order across
/// streams: `merge_pos` is the design's commit-ordered stamp for streams of a merge group
/// (SCALE-OUT.md §4.5); until writes stamp it (0 here), the merge order is the writing
/// transaction's start time (`created_at`, commit order on one node's writer), then the stream
/// id's bytes, then the seq. Within a stream the order is always its seq.
extension PostgresEventQueries {
    /// The events after `cursor` (an event id) in the streams `audiences`, merged, oldest first;
    /// at most `limit` (the newest ones). The cursor, whichever stream it is in, marks the same
    /// point in all of them; nil or unknown = the tail of the whole history (`historyReset`).
    static func replay(
        _ connection: PostgresConnection,
        _ logger: Logger,
        audiences: [String],
        after cursor: String?,
        limit: Int
    ) async throws
        -> ReplayWindow
    {
        var highWater = Dictionary(audiences.map { ($0, Int64(0)) }, uniquingKeysWith: { first, _ in first })
        let heads = try await connection.query(
            """
            SELECT a, (SELECT max(seq) FROM events WHERE stream_id = a AND kind = 0) FROM unnest(\(audiences)::text[]) AS a
            """,
            logger: logger
        )
        for try await (audience, last) in heads.decode((String, Int64?).self) { highWater[audience] = last ?? 0 }
        var afterSeq: [String: Int64] = [:]
        var historyReset = true
        if let cursor, let point = try await position(connection, logger, id: cursor), audiences.contains(point.stream) {
            historyReset = false
            for audience in audiences {
                afterSeq[audience] = audience == point.stream ? point.seq : try await seq(connection, logger, in: audience, upTo: point)
            }
        }
        // A stream's seqs have gaps (answer slots, failures and conversation changes share the
        // clock), so truncation is found by reading one row more than fits, not from arithmetic.
        var streams: [[(position: LogPosition, event: ChatEvent)]] = []
        for audience in audiences {
            let rows = try await connection.query(
                """
                SELECT \(unescaped: columns), coalesce(e.merge_pos, 0), \(unescaped: createdMicros) FROM events e
                WHERE e.stream_id = \(audience) AND e.kind = 0 AND e.seq > \(afterSeq[audience] ?? 0) ORDER BY e.seq DESC LIMIT \(limit + 1)
                """,
                logger: logger
            )
            var stream: [(position: LogPosition, event: ChatEvent)] = []
            for try await (id, seq, streamID, conversation, role, content, createdAt, device, attachments, mergePos, micros) in rows.decode(
                (String, Int64, String, String, Int16?, String?, Int64, String?, String?, Int64, Int64).self
            ) {
                let event = event((id, seq, streamID, conversation, role, content, createdAt, device, attachments))
                stream.append((LogPosition(stream: streamID, seq: seq, mergePos: mergePos, createdMicros: micros), event))
            }
            streams.append(stream.reversed())
        }
        let merged = merge(streams)
        return ReplayWindow(events: merged.suffix(limit), truncated: merged.count > limit, historyReset: historyReset, highWater: highWater)
    }

    /// Where an event stands in the merge order.
    struct LogPosition {
        var stream: String
        var seq: Int64
        var mergePos: Int64
        var createdMicros: Int64

        /// Whether an event of `stream` at the same merge position and time comes before this one.
        func follows(_ stream: String) -> Bool { Array(stream.utf8).lexicographicallyPrecedes(Array(self.stream.utf8)) }

        /// Merge order: merge position, time, then stream (seq order within a stream is kept by the merge).
        func precedes(_ other: LogPosition) -> Bool {
            if mergePos != other.mergePos { return mergePos < other.mergePos }
            if createdMicros != other.createdMicros { return createdMicros < other.createdMicros }
            if stream != other.stream { return other.follows(stream) }
            return seq < other.seq
        }
    }

    /// The transaction time of `events e` in microseconds.
    private static let createdMicros = "(extract(epoch FROM e.created_at) * 1000000)::bigint"

    /// The position of event `id`, nil when there is none.
    private static func position(_ connection: PostgresConnection, _ logger: Logger, id: String) async throws -> LogPosition? {
        let rows = try await connection.query(
            "SELECT e.stream_id, e.seq, coalesce(e.merge_pos, 0), \(unescaped: createdMicros) FROM events e WHERE e.id = \(id) AND e.kind = 0",
            logger: logger
        )
        for try await (stream, seq, mergePos, micros) in rows.decode((String, Int64, Int64, Int64).self) {
            return LogPosition(stream: stream, seq: seq, mergePos: mergePos, createdMicros: micros)
        }
        return nil
    }

    /// The seq of the newest event of `stream` merged at or before `point` (0 for none).
    private static func seq(_ connection: PostgresConnection, _ logger: Logger, in stream: String, upTo point: LogPosition) async throws -> Int64 {
        let comparison = point.follows(stream) ? "<=" : "<"
        let rows = try await connection.query(
            """
            SELECT e.seq FROM events e WHERE e.stream_id = \(stream) AND e.kind = 0
              AND (coalesce(e.merge_pos, 0), \(unescaped: createdMicros)) \(unescaped: comparison) (\(point.mergePos), \(point.createdMicros))
            ORDER BY e.seq DESC LIMIT 1
            """,
            logger: logger
        )
        for try await seq in rows.decode(Int64.self) { return seq }
        return 0
    }

    /// The streams' events (each oldest first) in one list, in merge order.
    private static func merge(_ streams: [[(position: LogPosition, event: ChatEvent)]]) -> [ChatEvent] {
        var next = Array(repeating: 0, count: streams.count)
        var merged: [ChatEvent] = []
        while true {
            var best: Int?
            for index in streams.indices where next[index] < streams[index].count {
                if let current = best, !streams[index][next[index]].position.precedes(streams[current][next[current]].position) { continue }
                best = index
            }
            guard let best else { return merged }
            merged.append(streams[best][next[best]].event)
            next[best] += 1
        }
    }
}
