import Foundation
import Logging
import PostgresNIO
import RelayCore

/// The notification queues of devices out of the foreground (`queue_entries`, migration 5).
enum PostgresQueueQueries {
    /// Queues `item` (at `seq` of `stream`) for each target, keeping each device's newest `capacity`.
    static func enqueue(
        _ connection: PostgresConnection,
        _ item: QueueItem,
        stream: String,
        seq: Int64,
        targets: [QueueTarget],
        at millis: Int64,
        logger: Logger
    ) async throws {
        guard !targets.isEmpty else { return }
        let json = String(decoding: try JSONEncoder().encode(item), as: UTF8.self)
        let devices = targets.map(\.deviceID)
        let expiries = targets.map { millis + max(0, $0.ttlMillis) }
        let capacities = targets.map { Int64(max(0, $0.capacity)) }
        try await connection.query(
            """
            INSERT INTO queue_entries (device_id, stream_id, seq, conversation_id, item, queued_ms, expires_ms)
            SELECT d, \(stream), \(seq), \(item.conversationID), \(json), \(millis), e FROM unnest(\(devices)::text[], \(expiries)::bigint[]) AS t(d, e)
            """,
            logger: logger
        )
        // The oldest entries past a device's capacity go.
        try await connection.query(
            """
            DELETE FROM queue_entries q USING (
              SELECT id FROM (
                SELECT e.id, row_number() OVER (PARTITION BY e.device_id ORDER BY e.seq DESC, e.id DESC) AS n, t.c
                FROM queue_entries e JOIN unnest(\(devices)::text[], \(capacities)::bigint[]) AS t(d, c) ON e.device_id = t.d
              ) ranked WHERE n > c
            ) gone WHERE q.id = gone.id
            """,
            logger: logger
        )
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
        try await enqueue(connection, item, stream: stream, seq: seq ?? 0, targets: targets, at: millis, logger: logger)
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
            SELECT id, item, queued_ms FROM queue_entries
            WHERE device_id = \(deviceID) AND expires_ms > \(millis) AND (\(wanted)::text[] IS NULL OR conversation_id = ANY(\(wanted)::text[]))
            ORDER BY min(id) OVER (PARTITION BY stream_id), seq, id
            """,
            logger: logger
        )
        var queued: [QueuedEvent] = []
        let decoder = JSONDecoder()
        for try await (id, json, queuedAt) in rows.decode((Int64, String, Int64).self) {
            guard let item = try? decoder.decode(QueueItem.self, from: Data(json.utf8)) else {
                logger.warning("postgres: a queue entry could not be read; skipped", metadata: ["id": "\(id)", "device": "\(deviceID)"])
                continue
            }
            queued.append(QueuedEvent(id: id, item: item, queuedAt: queuedAt))
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
