import Foundation
import GRDB
import RelayCore
import RelayStore

extension SQLiteToPostgres {
    static let queueColumns = CopyColumn.list(
        "device_id text, stream_id text, seq bigint, conversation_id text, queued_ms bigint, expires_ms bigint"
    )

    /// The notification queues: SQLite keeps them as cursors into the log (`queue_devices`,
    /// `queue_sources`, `queue_items`, `queue_delivered`), PostgreSQL as one entry per queued
    /// event and device (`queue_entries`, pointing at the event in the log). What a device would still be handed (`QueueQueries.pending`,
    /// unexpired at `now`, its newest `capacity`) becomes its entries, at their place in their
    /// stream, expiring when they would have.
    static func queueRows(_ db: Database, at now: Int64, _ row: ([CopyValue]) throws -> Void) throws {
        for device in try Row.fetchAll(db, sql: "SELECT device_id, ttl_millis, capacity FROM queue_devices ORDER BY device_id") {
            let (deviceID, ttl, capacity): (String, Int64, Int64) = (device["device_id"], device["ttl_millis"], device["capacity"])
            let pending = try QueueQueries.pending(db, deviceID: deviceID, at: now, limit: Int.max)
            for entry in pending.suffix(Int(max(0, capacity))) {
                let stream: String
                let seq: Int64?
                switch entry.item {
                case .message(let event):
                    (stream, seq) = (event.userID, event.seq)
                case .failure(let failure):
                    stream = failure.userID
                    seq = try Int64.fetchOne(
                        db,
                        sql: "SELECT ended_seq FROM messages WHERE device_id = ? AND client_id = ?",
                        arguments: [failure.turn.deviceID, failure.turn.clientID]
                    )
                }
                // A failure whose message is gone has no place in the log: nothing would read it.
                guard let seq else { continue }
                try row([
                    .text(deviceID), .text(stream), .integer(seq), .text(entry.item.conversationID), .integer(entry.queuedAt),
                    .integer(entry.queuedAt + max(0, ttl)),
                ])
            }
        }
    }
}
