import Logging
import PostgresNIO
import RelayCore

/// Gateway devices' tokens, one per device and role (`device_tokens`).
enum PostgresDeviceTokenQueries {
    /// Every role's token of a device.
    static func all(_ connection: PostgresConnection, deviceID: String, logger: Logger) async throws -> [DeviceToken] {
        let rows = try await connection.query(
            "SELECT role, token_hash, scopes, issued_ms, revoked_ms FROM device_tokens WHERE device_id = \(deviceID)",
            logger: logger
        )
        var tokens: [DeviceToken] = []
        for try await (role, hash, scopes, issued, revoked) in rows.decode((String, String?, String?, Int64, Int64?).self) {
            tokens.append(
                DeviceToken(deviceID: deviceID, role: role, tokenHash: hash, scopes: splitList(scopes), issuedAt: issued, revokedAt: revoked)
            )
        }
        return tokens
    }

    /// Stores a role's token as it is (revoked or not), replacing the role's earlier one.
    static func store(_ connection: PostgresConnection, _ token: DeviceToken, logger: Logger) async throws {
        let scopes = token.scopes.isEmpty ? nil : token.scopes.joined(separator: ",")
        try await connection.query(
            """
            INSERT INTO device_tokens (device_id, role, token_hash, scopes, issued_ms, revoked_ms)
            VALUES (\(token.deviceID), \(token.role), \(token.tokenHash), \(scopes), \(token.issuedAt), \(token.revokedAt))
            ON CONFLICT (device_id, role) DO UPDATE SET token_hash = excluded.token_hash, scopes = excluded.scopes,
              issued_ms = excluded.issued_ms, revoked_ms = excluded.revoked_ms
            """,
            logger: logger
        )
    }

    static func delete(_ connection: PostgresConnection, deviceID: String, role: String, logger: Logger) async throws {
        try await connection.query("DELETE FROM device_tokens WHERE device_id = \(deviceID) AND role = \(role)", logger: logger)
    }
}
