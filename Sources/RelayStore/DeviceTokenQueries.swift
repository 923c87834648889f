import GRDB

/// A gateway device's token for one role (stored as a SHA-256 hash).
public struct DeviceToken: Sendable, Equatable {
    public var deviceID: String
    public var role: String
    /// nil once revoked.
    public var tokenHash: String?
    public var scopes: [String]
    public var issuedAt: Int64
    public var revokedAt: Int64?
}

/// Device tokens, one per device and role: issuing one replaces the previous one.
public enum DeviceTokenQueries {
    public static func fetch(_ db: Database, deviceID: String, role: String) throws -> DeviceToken? {
        try db.row("SELECT * FROM device_tokens WHERE device_id = ? AND role = ?", [deviceID, role]).map { row in
            DeviceToken(
                deviceID: row["device_id"],
                role: row["role"],
                tokenHash: row["token_hash"],
                scopes: (row["scopes"] as String?).map { $0.split(separator: ",").map(String.init) } ?? [],
                issuedAt: row["issued_at"],
                revokedAt: row["revoked_at"]
            )
        }
    }

    /// Stores a new token for (device, role), replacing any earlier one.
    public static func issue(_ db: Database, deviceID: String, role: String, tokenHash: String, scopes: [String], at millis: Int64) throws {
        try db.run(
            """
            INSERT INTO device_tokens (device_id, role, token_hash, scopes, issued_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)
            ON CONFLICT(device_id, role) DO UPDATE SET token_hash = excluded.token_hash, scopes = excluded.scopes,
                issued_at = excluded.issued_at, revoked_at = NULL
            """,
            [deviceID, role, tokenHash, scopes.isEmpty ? nil : scopes.joined(separator: ","), millis]
        )
    }

    /// Revokes the role's token; the device gets no new one by connecting (an operator rotates it).
    public static func revoke(_ db: Database, deviceID: String, role: String, at millis: Int64) throws -> Bool {
        try db.run("UPDATE device_tokens SET token_hash = NULL, revoked_at = ? WHERE device_id = ? AND role = ?", [millis, deviceID, role])
        return db.changesCount > 0
    }

    public static func deleteAll(_ db: Database, deviceID: String) throws {
        try db.run("DELETE FROM device_tokens WHERE device_id = ?", [deviceID])
    }
}
