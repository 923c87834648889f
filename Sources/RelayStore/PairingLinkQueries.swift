import Foundation
import GRDB

/// One-time pairing links (`clawrelay pair-link`), per-bot device tokens (`device.pair`), and the
/// install's stable gateway fingerprint.
public enum PairingLinkQueries {
    /// The fingerprint of this relay install, created on first use.
    public static func fingerprint(_ db: Database) throws -> String {
        if let existing = try db.value(String.self, "SELECT value FROM meta WHERE key = 'gateway_fingerprint'") { return existing }
        let fresh = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        try db.run("INSERT INTO meta (key, value) VALUES ('gateway_fingerprint', ?)", [String(fresh)])
        return String(fresh)
    }

    public static func addLink(_ db: Database, tokenHash: String, expiresAt: Int64) throws {
        try db.run("INSERT INTO pair_links (token_hash, expires_at) VALUES (?, ?)", [tokenHash, expiresAt])
    }

    /// Marks a link used; false when it is unknown, expired or already used.
    public static func consumeLink(_ db: Database, tokenHash: String, now: Int64) throws -> Bool {
        try db.run("UPDATE pair_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?", [now, tokenHash, now])
        return db.changesCount > 0
    }

    public static func setBotToken(_ db: Database, deviceID: String, botID: String, tokenHash: String, now: Int64) throws {
        try db.run(
            "INSERT OR REPLACE INTO bot_pairings (device_id, bot_id, token_hash, created_at) VALUES (?, ?, ?, ?)",
            [deviceID, botID, tokenHash, now]
        )
    }

    /// The bot a token pairs this device with, if any.
    public static func bot(_ db: Database, deviceID: String, tokenHash: String) throws -> String? {
        try db.value(String.self, "SELECT bot_id FROM bot_pairings WHERE device_id = ? AND token_hash = ?", [deviceID, tokenHash])
    }

    /// A device's bot pairings: bot id → token hash.
    public static func bots(_ db: Database, deviceID: String) throws -> [String: String] {
        var bots: [String: String] = [:]
        for row in try db.rows("SELECT bot_id, token_hash FROM bot_pairings WHERE device_id = ?", [deviceID]) {
            bots[row["bot_id"]] = row["token_hash"]
        }
        return bots
    }

    /// True when the link is known, unused and unexpired at `now`.
    public static func isUsable(_ db: Database, tokenHash: String, now: Int64) throws -> Bool {
        try db.value(
            Bool.self,
            "SELECT EXISTS (SELECT 1 FROM pair_links WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?)",
            [tokenHash, now]
        )
            ?? false
    }

    public static func removeBots(_ db: Database, deviceID: String, botIDs: [String]?) throws -> Int {
        if let botIDs {
            var removed = 0
            for bot in botIDs {
                try db.run("DELETE FROM bot_pairings WHERE device_id = ? AND bot_id = ?", [deviceID, bot])
                removed += db.changesCount
            }
            return removed
        }
        try db.run("DELETE FROM bot_pairings WHERE device_id = ?", [deviceID])
        return db.changesCount
    }
}
