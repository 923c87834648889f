import Foundation
import Logging
import PostgresNIO

/// One-time pairing links (`clawrelay pair-link`), per-bot device tokens (`device.pair`), and the
/// install's stable gateway fingerprint.
enum PostgresPairingLinkQueries {
    /// The fingerprint of this relay install, created on first use; every node reads the same one
    /// (a node that loses the race to create it reads the winner's).
    static func fingerprint(_ connection: PostgresConnection, logger: Logger) async throws -> String {
        let fresh = String(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16))
        return try await PostgresMetaQueries.shared(connection, key: "gateway_fingerprint", proposed: fresh, logger: logger)
    }

    static func addLink(_ connection: PostgresConnection, tokenHash: String, expiresAt: Int64, logger: Logger) async throws {
        try await connection.query("INSERT INTO pair_links (token_hash, expires_ms) VALUES (\(tokenHash), \(expiresAt))", logger: logger)
    }

    /// True when the link is known, unused and unexpired at `now`. `lock` holds its row until the
    /// transaction ends, so two nodes cannot both find it usable and both consume it.
    static func isUsable(_ connection: PostgresConnection, tokenHash: String, now: Int64, lock: Bool = false, logger: Logger) async throws -> Bool {
        let query: PostgresQuery =
            lock
            ? "SELECT 1 FROM pair_links WHERE token_hash = \(tokenHash) AND used_ms IS NULL AND expires_ms > \(now) FOR UPDATE"
            : "SELECT 1 FROM pair_links WHERE token_hash = \(tokenHash) AND used_ms IS NULL AND expires_ms > \(now)"
        for try await _ in try await connection.query(query, logger: logger) { return true }
        return false
    }

    /// Marks a link used; false when it is unknown, expired or already used.
    static func consumeLink(_ connection: PostgresConnection, tokenHash: String, now: Int64, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            "UPDATE pair_links SET used_ms = \(now) WHERE token_hash = \(tokenHash) AND used_ms IS NULL AND expires_ms > \(now) RETURNING 1",
            logger: logger
        )
        for try await _ in rows { return true }
        return false
    }

    static func setBotToken(
        _ connection: PostgresConnection,
        deviceID: String,
        botID: String,
        tokenHash: String,
        now: Int64,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO bot_pairings (device_id, bot_id, token_hash, created_ms) VALUES (\(deviceID), \(botID), \(tokenHash), \(now))
            ON CONFLICT (device_id, bot_id) DO UPDATE SET token_hash = excluded.token_hash, created_ms = excluded.created_ms
            """,
            logger: logger
        )
    }

    /// A device's bot pairings: bot id → token hash.
    static func bots(_ connection: PostgresConnection, deviceID: String, logger: Logger) async throws -> [String: String] {
        var bots: [String: String] = [:]
        let rows = try await connection.query("SELECT bot_id, token_hash FROM bot_pairings WHERE device_id = \(deviceID)", logger: logger)
        for try await (bot, hash) in rows.decode((String, String).self) { bots[bot] = hash }
        return bots
    }

    /// Unpairs the device from `botIDs`, or from every bot when nil; returns how many it was paired with.
    static func removeBots(_ connection: PostgresConnection, deviceID: String, botIDs: [String]?, logger: Logger) async throws -> Int {
        let query: PostgresQuery =
            if let botIDs {
                "DELETE FROM bot_pairings WHERE device_id = \(deviceID) AND bot_id = ANY(\(botIDs)) RETURNING 1"
            } else {
                "DELETE FROM bot_pairings WHERE device_id = \(deviceID) RETURNING 1"
            }
        var removed = 0
        for try await _ in try await connection.query(query, logger: logger) { removed += 1 }
        return removed
    }
}
