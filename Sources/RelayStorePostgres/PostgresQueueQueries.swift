import Foundation
import Logging
import PostgresNIO
import RelayCore

/// The notification queues of devices out of the foreground (`queue_entries`, migrations 5 and
/// 6). An entry points at its event in the log (`stream_id`, `seq`); the turn writes queue what
/// they store in their own call (`relay_turn_writes`).
enum PostgresQueueQueries {
    /// Queues the event at `seq` of `stream` for each target, keeping each device's newest `capacity`.
    static func enqueue(
        _ connection: PostgresConnection,
        conversationID: String,
        stream: String,
        seq: Int64,
        targets: [QueueTarget],
        at millis: Int64,
        logger: Logger
    ) async throws {
        guard !targets.isEmpty else { return }
        let devices = targets.map(\.deviceID)
        let expiries = targets.map { millis + max(0, $0.ttlMillis) }
        try await connection.query(
            """
            INSERT INTO queue_entries (device_id, stream_id, seq, conversation_id, queued_ms, expires_ms)
            SELECT d, \(stream), \(seq), \(conversationID), \(millis), e FROM unnest(\(devices)::text[], \(expiries)::bigint[]) AS t(d, e)
            """,
            logger: logger
        )
        try await connection.query("SELECT relay_trim_queues(\(devices), \(targets.map { Int64($0.capacity) }))", logger: logger)
    }

    /// `CoreJournal.enqueue`: queues an event stored before, at its own place in its stream.
    static func enqueueStored(
        _ connection: PostgresConnection,
        _ item: QueueItem,
        targets: [QueueTarget],
        at millis: Int64,
        logger: Logger
    ) async throws {
        let seq: Int64?
        let stream: String
        switch item {
        case .message(let event):
            (stream, seq) = (event.userID, event.seq)
        case .failure(let failure):
            stream = failure.userID
            seq = try await connection.first(
                "SELECT ended_seq FROM messages WHERE device_id = \(failure.turn.deviceID) AND client_id = \(failure.turn.clientID)",
                as: Int64.self,
                logger: logger
            )
        }
        try await enqueue(
            connection,
            conversationID: item.conversationID,
            stream: stream,
            seq: seq ?? 0,
            targets: targets,
            at: millis,
            logger: logger
        )
    }

    /// A device's unexpired entries in stream order (each stream's entries by seq, streams in the
    /// order of their first entry), only those of `conversations` when given.
    static func pending(
        _ connection: PostgresConnection,
        deviceID: String,
        conversations: Set<String>?,
        at millis: Int64,
        logger: Logger
    ) async throws -> [QueuedEvent] {
        if let conversations, conversations.isEmpty { return [] }
        let wanted = conversations.map { Array($0) }
        let rows = try await connection.query(
            """
            SELECT \(unescaped: PostgresLogEntries.columns), q.id, q.queued_ms, q.stream_id
            FROM queue_entries q JOIN events e ON e.stream_id = q.stream_id AND e.seq = q.seq LEFT JOIN messages m ON m.run_id = e.run_id
            WHERE q.device_id = \(deviceID) AND q.expires_ms > \(millis) AND (\(wanted)::text[] IS NULL OR q.conversation_id = ANY(\(wanted)::text[]))
            ORDER BY min(q.id) OVER (PARTITION BY q.stream_id), q.seq, q.id
            """,
            logger: logger
        )
        var queued: [QueuedEvent] = []
        // The entry's columns come first, as `PostgresLogEntries.Row`; then the queue's own.
        let decoded = rows.decode(
            (Int64, String, Int16, String, Int16?, String?, String?, String?, String?, Int64, String?, String?, Int16?, String?, Int64, Int64, String)
                .self
        )
        for try await (
            seq, event, kind, conversation, role, content, device, attachments, run, created, sender, client, state, answer, id, queuedAt, stream
        )
            in decoded
        {
            let row = (seq, event, kind, conversation, role, content, device, attachments, run, created, sender, client, state, answer)
            switch PostgresLogEntries.entry(row, stream: stream) {
            case .message(let event): queued.append(QueuedEvent(id: id, item: .message(event), queuedAt: queuedAt))
            case .failure(let failure, _): queued.append(QueuedEvent(id: id, item: .failure(failure), queuedAt: queuedAt))
            case .conversation: continue
            }
        }
        return queued
    }

    static func delete(_ connection: PostgresConnection, deviceID: String, ids: [Int64], logger: Logger) async throws {
        guard !ids.isEmpty else { return }
        try await connection.query("DELETE FROM queue_entries WHERE device_id = \(deviceID) AND id = ANY(\(ids))", logger: logger)
    }

    static func purge(_ connection: PostgresConnection, at millis: Int64, logger: Logger) async throws {
        try await connection.query("DELETE FROM queue_entries WHERE expires_ms <= \(millis)", logger: logger)
    }

    /// Unexpired entries per device, for `clawrelay devices list` (devices without any are left out).
    static func depths(_ connection: PostgresConnection, at millis: Int64, logger: Logger) async throws -> [String: Int] {
        let rows = try await connection.query(
            "SELECT device_id, count(*) FROM queue_entries WHERE expires_ms > \(millis) GROUP BY device_id",
            logger: logger
        )
        var depths: [String: Int] = [:]
        for try await (deviceID, count) in rows.decode((String, Int64).self) { depths[deviceID] = Int(count) }
        return depths
    }
}
