import GRDB
import RelayCore

extension DeviceRecord {
    init(row: Row) {
        self.init(
            id: row["id"],
            userID: row["user_id"],
            protocolName: row["protocol"],
            claimedName: row["claimed_name"],
            deviceInfoJSON: row["device_info"],
            isAdmin: row["is_admin"],
            status: Status(rawValue: row["status"]) ?? .revoked,
            tokenHash: row["token_hash"],
            tokenDelivered: row["token_delivered"],
            createdAt: row["created_at"],
            lastSeenAt: row["last_seen_at"]
        )
        publicKey = row["public_key"]
        role = row["role"]
        scopes = (row["scopes"] as String?).map { $0.split(separator: ",").map(String.init) } ?? []
        presence = row["presence"] ?? "offline"
    }
}

/// Device and user queries; each runs inside the caller's transaction.
public enum DeviceQueries {
    public static func fetch(_ db: Database, id: String) throws -> DeviceRecord? {
        try db.row("SELECT * FROM devices WHERE id = ?", [id]).map(DeviceRecord.init(row:))
    }

    /// The device of a protocol whose bearer token has this SHA-256 (`devices_token` index).
    public static func fetch(_ db: Database, tokenHash: String, protocolName: String) throws -> DeviceRecord? {
        try db.row("SELECT * FROM devices WHERE token_hash = ? AND protocol = ? LIMIT 1", [tokenHash, protocolName]).map(DeviceRecord.init(row:))
    }

    public static func all(_ db: Database) throws -> [DeviceRecord] {
        try db.rows("SELECT * FROM devices ORDER BY created_at, id").map(DeviceRecord.init(row:))
    }

    /// Approved devices of a user that speak `protocolName`.
    public static func count(_ db: Database, userID: String, protocolName: String) throws -> Int {
        try db.value(Int.self, "SELECT COUNT(*) FROM devices WHERE user_id = ? AND protocol = ? AND status = 'approved'", [userID, protocolName]) ?? 0
    }

    public static func hasAdmin(_ db: Database) throws -> Bool {
        try db.value(Bool.self, "SELECT EXISTS (SELECT 1 FROM devices WHERE is_admin = 1 AND status = 'approved')") ?? false
    }

    public static func insert(_ db: Database, _ device: DeviceRecord) throws {
        // A device revoked before it was approved belongs to no user ("").
        if !device.userID.isEmpty {
            try db.run("INSERT OR IGNORE INTO users (id, created_at) VALUES (?, ?)", [device.userID, device.createdAt])
        }
        try db.run(
            """
            INSERT INTO devices (id, user_id, protocol, claimed_name, device_info, is_admin, status, token_hash,
                                 token_delivered, created_at, last_seen_at, public_key, role, scopes)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET user_id = excluded.user_id, claimed_name = excluded.claimed_name,
                device_info = excluded.device_info, is_admin = excluded.is_admin, status = excluded.status,
                token_hash = excluded.token_hash, token_delivered = excluded.token_delivered,
                created_at = excluded.created_at, last_seen_at = excluded.last_seen_at,
                public_key = excluded.public_key, role = excluded.role, scopes = excluded.scopes
            """,
            [
                device.id, device.userID, device.protocolName, device.claimedName, device.deviceInfoJSON, device.isAdmin,
                device.status.rawValue, device.tokenHash, device.tokenDelivered, device.createdAt, device.lastSeenAt,
                device.publicKey, device.role, device.scopes.isEmpty ? nil : device.scopes.joined(separator: ","),
            ]
        )
    }

    public static func setTokenHash(_ db: Database, id: String, hash: String) throws {
        try db.run("UPDATE devices SET token_hash = ?, token_delivered = 0 WHERE id = ?", [hash, id])
    }

    /// The device's token stops working (a revoked bearer-token device).
    public static func clearToken(_ db: Database, id: String) throws {
        try db.run("UPDATE devices SET token_hash = NULL WHERE id = ?", [id])
    }

    public static func markTokenDelivered(_ db: Database, id: String) throws {
        try db.run("UPDATE devices SET token_delivered = 1 WHERE id = ?", [id])
    }

    public static func touch(_ db: Database, id: String, at millis: Int64) throws {
        try db.run("UPDATE devices SET last_seen_at = ? WHERE id = ?", [millis, id])
    }

    /// Adds a device that needs no pairing (Companion clients share one token) unless it exists.
    public static func ensure(_ db: Database, id: String, userID: String, protocolName: String, claimedName: String?, at millis: Int64) throws {
        try db.run("INSERT OR IGNORE INTO users (id, created_at) VALUES (?, ?)", [userID, millis])
        try db.run(
            """
            INSERT OR IGNORE INTO devices (id, user_id, protocol, claimed_name, is_admin, status, token_delivered, created_at, last_seen_at)
            VALUES (?, ?, ?, ?, 0, 'approved', 1, ?, ?)
            """,
            [id, userID, protocolName, claimedName, millis, millis]
        )
    }

    public static func setPresence(_ db: Database, id: String, _ presence: String, at millis: Int64) throws {
        try db.run("UPDATE devices SET presence = ?, presence_at = ? WHERE id = ?", [presence, millis, id])
    }

    /// Nobody is connected to a relay that is starting.
    public static func resetPresence(_ db: Database) throws {
        try db.run("UPDATE devices SET presence = 'offline' WHERE presence != 'offline'")
    }

    /// Makes the device an admin, or not. False when there is no such approved device.
    public static func setAdmin(_ db: Database, id: String, _ isAdmin: Bool) throws -> Bool {
        try db.run("UPDATE devices SET is_admin = ? WHERE id = ? AND status = 'approved'", [isAdmin, id])
        return db.changesCount > 0
    }

    public static func setStatus(_ db: Database, id: String, _ status: DeviceRecord.Status) throws -> Bool {
        try db.run("UPDATE devices SET status = ? WHERE id = ?", [status.rawValue, id])
        return db.changesCount > 0
    }
}
