import GRDB
import RelayCore

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

    /// Every role's token of a device.
    public static func all(_ db: Database, deviceID: String) throws -> [DeviceToken] {
        try db.rows("SELECT * FROM device_tokens WHERE device_id = ?", [deviceID]).map { row in
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

    /// Stores a role's token as it is (revoked or not), replacing the role's earlier one.
    public static func store(_ db: Database, _ token: DeviceToken) throws {
        try db.run(
            """
            INSERT INTO device_tokens (device_id, role, token_hash, scopes, issued_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(device_id, role) DO UPDATE SET token_hash = excluded.token_hash, scopes = excluded.scopes,
                issued_at = excluded.issued_at, revoked_at = excluded.revoked_at
            """,
            [
                token.deviceID, token.role, token.tokenHash, token.scopes.isEmpty ? nil : token.scopes.joined(separator: ","), token.issuedAt,
                token.revokedAt,
            ]
        )
    }

    public static func delete(_ db: Database, deviceID: String, role: String) throws {
        try db.run("DELETE FROM device_tokens WHERE device_id = ? AND role = ?", [deviceID, role])
    }

    public static func deleteAll(_ db: Database, deviceID: String) throws {
        try db.run("DELETE FROM device_tokens WHERE device_id = ?", [deviceID])
    }
}
