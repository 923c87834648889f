import Foundation
import GRDB
import RelayCore

extension Migrations {
    /// Queues by cursor, not by copy (issue 26). An event queued for away devices names them in its
    /// own row (`events.queued_for`, with the turn that made it in `events.turn`), written in the
    /// insert the event needs anyway; a device's queue is read from its users' logs after its
    /// floor (`queue_sources.from_seq`), minus what it was handed (`queue_delivered`, one row per
    /// item, written in one transaction per delivery). What is not a stored event (a failed
    /// turn) is a row of `queue_items`. `notification_queue` (a JSON copy of the item per event
    /// and device, and a capacity `DELETE` after each) moves there and goes.
    static func queueCursors(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE events ADD COLUMN queued_for TEXT;
                ALTER TABLE events ADD COLUMN turn TEXT;
                CREATE TABLE queue_devices (device_id TEXT PRIMARY KEY, ttl_millis INTEGER NOT NULL, capacity INTEGER NOT NULL);
                CREATE TABLE queue_sources (
                    device_id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    from_seq INTEGER NOT NULL,
                    PRIMARY KEY (device_id, user_id)
                ) WITHOUT ROWID;
                CREATE TABLE queue_items (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    conversation_id TEXT NOT NULL,
                    item TEXT NOT NULL,
                    queued_for TEXT NOT NULL,
                    queued_at INTEGER NOT NULL
                );
                CREATE INDEX queue_items_user ON queue_items(user_id, seq);
                CREATE TABLE queue_delivered (
                    device_id TEXT NOT NULL,
                    item_id INTEGER NOT NULL,
                    user_id TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (device_id, item_id)
                ) WITHOUT ROWID;
                """
        )
        // Every entry still queued keeps its place, turn and time; a device's time to live is what
        // its newest entry had (its capacity is the core's default until its next entry says).
        let decoder = JSONDecoder()
        for row in try Row.fetchAll(db, sql: "SELECT device_id, item, queued_at, expires_at FROM notification_queue ORDER BY id") {
            guard let item = try? decoder.decode(QueueItem.self, from: Data((row["item"] as String).utf8)) else { continue }
            let deviceID: String = row["device_id"]
            let (queuedAt, expiresAt): (Int64, Int64) = (row["queued_at"], row["expires_at"])
            let target = QueueTarget(deviceID: deviceID, ttlMillis: max(1, expiresAt - queuedAt), capacity: 1_000)
            try QueueQueries.enqueue(db, item, targets: [target], at: queuedAt)
        }
        try db.execute(sql: "DROP TABLE notification_queue")
    }
}
