import Foundation
import GRDB
import RelayCore

/// The per-device notification queues.
public enum QueueQueries {
    /// Appends `item` to each target's queue, dropping the oldest entries past its capacity.
    public static func enqueue(_ db: Database, _ item: QueueItem, targets: [QueueTarget], at millis: Int64) throws {
        guard !targets.isEmpty else { return }
        let json = String(decoding: try JSONEncoder().encode(item), as: UTF8.self)
        for target in targets {
            try db.run(
                "INSERT INTO notification_queue (device_id, conversation_id, item, queued_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                [target.deviceID, item.conversationID, json, millis, millis + target.ttlMillis]
            )
            try db.run(
                """
                DELETE FROM notification_queue WHERE device_id = ? AND id <= (
                    SELECT id FROM notification_queue WHERE device_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)
                """,
                [target.deviceID, target.deviceID, target.capacity]
            )
        }
    }

    /// A device's unexpired entries, oldest first (at most `limit`), only those of `conversations` when given.
    public static func pending(
        _ db: Database,
        deviceID: String,
        conversations: Set<String>? = nil,
        at millis: Int64,
        limit: Int = 10_000
    ) throws
        -> [QueuedEvent]
    {
        if let conversations, conversations.isEmpty { return [] }
        let decoder = JSONDecoder()
        var sql = "SELECT id, item, queued_at FROM notification_queue WHERE device_id = ? AND expires_at > ?"
        var arguments: [any DatabaseValueConvertible] = [deviceID, millis]
        if let conversations {
            sql += " AND conversation_id IN (" + Array(repeating: "?", count: conversations.count).joined(separator: ",") + ")"
            arguments += conversations.sorted().map { $0 as any DatabaseValueConvertible }
        }
        sql += " ORDER BY id LIMIT ?"
        arguments.append(limit)
        return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).compactMap { row in
            guard let item = try? decoder.decode(QueueItem.self, from: Data((row["item"] as String).utf8)) else { return nil }
            return QueuedEvent(id: row["id"], item: item, queuedAt: row["queued_at"])
        }
    }

    public static func delete(_ db: Database, deviceID: String, ids: [Int64]) throws {
        for id in ids { try db.run("DELETE FROM notification_queue WHERE device_id = ? AND id = ?", [deviceID, id]) }
    }

    public static func purge(_ db: Database, at millis: Int64) throws -> Int {
        try db.run("DELETE FROM notification_queue WHERE expires_at <= ?", [millis])
        return db.changesCount
    }

    /// Entries per device, for `clawrelay devices list`.
    public static func depths(_ db: Database, at millis: Int64) throws -> [String: Int] {
        var depths: [String: Int] = [:]
        for row in try db.rows("SELECT device_id, COUNT(*) AS n FROM notification_queue WHERE expires_at > ? GROUP BY device_id", [millis]) {
            depths[row["device_id"]] = row["n"]
        }
        return depths
    }
}
