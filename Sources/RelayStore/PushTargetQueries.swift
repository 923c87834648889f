import GRDB

/// Where a device can be woken: one target per device and kind (`apns`, ...).
public enum PushTargetQueries {
    /// Stores (or replaces) a device's push token.
    public static func upsert(_ db: Database, deviceID: String, kind: String, token: String, platform: String?, at millis: Int64) throws {
        try db.run(
            """
            INSERT INTO push_targets (device_id, kind, token, platform, created_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(device_id, kind) DO UPDATE SET token = excluded.token, platform = excluded.platform, created_at = excluded.created_at
            """,
            [deviceID, kind, token, platform, millis])
    }
}
