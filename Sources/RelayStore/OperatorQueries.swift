import GRDB
import RelayCore

public enum OperatorQueries {
    public static func enqueue(
        _ db: Database,
        action: OperatorCommand.Action,
        deviceID: String,
        userID: String?,
        at millis: Int64
    ) throws
        -> Int64
    {
        try db.run(
            "INSERT INTO operator_commands (action, device_id, user_id, created_at) VALUES (?, ?, ?, ?)",
            [action.rawValue, deviceID, userID, millis]
        )
        return db.lastInsertedRowID
    }

    public static func pending(_ db: Database, after id: Int64) throws -> [OperatorCommand] {
        try db.rows("SELECT * FROM operator_commands WHERE id > ? AND done_at IS NULL ORDER BY id", [id])
            .compactMap { row in
                guard let action = OperatorCommand.Action(rawValue: row["action"]) else { return nil }
                return OperatorCommand(id: row["id"], action: action, deviceID: row["device_id"], userID: row["user_id"])
            }
    }

    public static func complete(_ db: Database, id: Int64, result: String, at millis: Int64) throws {
        try db.run("UPDATE operator_commands SET done_at = ?, result = ? WHERE id = ?", [millis, result, id])
    }

    /// The command's result once the relay handled it, else nil.
    public static func result(_ db: Database, id: Int64) throws -> String? {
        try db.value(String.self, "SELECT result FROM operator_commands WHERE id = ? AND done_at IS NOT NULL", [id])
    }

    public static func lastID(_ db: Database) throws -> Int64 {
        try db.value(Int64.self, "SELECT COALESCE(MAX(id), 0) FROM operator_commands") ?? 0
    }

    /// Forgets every mirrored pending request (a relay starting: they lived only in the last run).
    public static func clearPending(_ db: Database) throws {
        try db.run("DELETE FROM pending_pairings")
    }

    /// Adds (or replaces) one pending request's row.
    public static func upsertPending(_ db: Database, _ entry: PendingPairing) throws {
        try db.run(
            """
            INSERT OR REPLACE INTO pending_pairings (device_id, claimed_name, device_info, created_at, expires_at, protocol, request_id, reason)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                entry.deviceID, entry.claimedName, entry.deviceInfoJSON, entry.createdAt, entry.expiresAt, entry.protocolName, entry.requestID,
                entry.reason,
            ]
        )
    }

    public static func removePending(_ db: Database, deviceID: String, protocolName: String) throws {
        try db.run("DELETE FROM pending_pairings WHERE device_id = ? AND protocol = ?", [deviceID, protocolName])
    }

    public static func pendingPairings(_ db: Database) throws -> [PendingPairing] {
        try db.rows("SELECT * FROM pending_pairings ORDER BY created_at").map { row in
            var entry = PendingPairing(
                deviceID: row["device_id"],
                claimedName: row["claimed_name"],
                deviceInfoJSON: row["device_info"],
                createdAt: row["created_at"],
                expiresAt: row["expires_at"]
            )
            entry.protocolName = row["protocol"]
            entry.requestID = row["request_id"]
            entry.reason = row["reason"]
            return entry
        }
    }
}
