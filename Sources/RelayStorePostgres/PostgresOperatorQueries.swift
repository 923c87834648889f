import Logging
import PostgresNIO
import RelayCore

/// Operator commands (`operator_commands`) and the mirror of pending pairing requests
/// (`pending_pairings`) that `clawrelay devices list` shows.
enum PostgresOperatorQueries {
    /// Adds a command; returns its id.
    static func enqueue(
        _ connection: PostgresConnection,
        action: OperatorCommand.Action,
        deviceID: String,
        userID: String?,
        at millis: Int64,
        logger: Logger
    ) async throws -> Int64 {
        let rows = try await connection.query(
            """
            INSERT INTO operator_commands (action, device_id, user_id, created_ms) VALUES (\(action.rawValue), \(deviceID), \(userID), \(millis))
            RETURNING id
            """,
            logger: logger
        )
        for try await id in rows.decode(Int64.self) { return id }
        throw PostgresStoreError(code: .rejected, message: "storing an operator command returned no id")
    }

    /// Commands not done yet after `id`, in order; actions this binary does not know are skipped.
    static func pending(_ connection: PostgresConnection, after id: Int64, logger: Logger) async throws -> [OperatorCommand] {
        let rows = try await connection.query(
            "SELECT id, action, device_id, user_id FROM operator_commands WHERE id > \(id) AND done_ms IS NULL ORDER BY id",
            logger: logger
        )
        var commands: [OperatorCommand] = []
        for try await (id, action, deviceID, userID) in rows.decode((Int64, String, String, String?).self) {
            guard let action = OperatorCommand.Action(rawValue: action) else { continue }
            commands.append(OperatorCommand(id: id, action: action, deviceID: deviceID, userID: userID))
        }
        return commands
    }

    static func complete(_ connection: PostgresConnection, id: Int64, result: String, at millis: Int64, logger: Logger) async throws {
        try await connection.query("UPDATE operator_commands SET done_ms = \(millis), result = \(result) WHERE id = \(id)", logger: logger)
    }

    /// The command's result once the relay handled it, else nil.
    static func result(_ connection: PostgresConnection, id: Int64, logger: Logger) async throws -> String? {
        let rows = try await connection.query("SELECT result FROM operator_commands WHERE id = \(id) AND done_ms IS NOT NULL", logger: logger)
        for try await result in rows.decode(String?.self) { return result }
        return nil
    }

    static func lastID(_ connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        let rows = try await connection.query("SELECT coalesce(max(id), 0)::bigint FROM operator_commands", logger: logger)
        for try await id in rows.decode(Int64.self) { return id }
        return 0
    }

    /// Forgets every mirrored pending request (a relay starting: they lived only in the last run).
    static func clearPending(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("DELETE FROM pending_pairings", logger: logger)
    }

    /// Adds (or replaces) one pending request's row.
    static func upsertPending(_ connection: PostgresConnection, _ entry: PendingPairing, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO pending_pairings (device_id, claimed_name, device_info, created_ms, expires_ms, protocol, request_id, reason)
            VALUES (\(entry.deviceID), \(entry.claimedName), \(entry.deviceInfoJSON), \(entry.createdAt), \(entry.expiresAt), \(entry.protocolName),
              \(entry.requestID), \(entry.reason))
            ON CONFLICT (device_id) DO UPDATE SET claimed_name = excluded.claimed_name, device_info = excluded.device_info,
              created_ms = excluded.created_ms, expires_ms = excluded.expires_ms, protocol = excluded.protocol,
              request_id = excluded.request_id, reason = excluded.reason
            """,
            logger: logger
        )
    }

    static func removePending(_ connection: PostgresConnection, deviceID: String, protocolName: String, logger: Logger) async throws {
        try await connection.query("DELETE FROM pending_pairings WHERE device_id = \(deviceID) AND protocol = \(protocolName)", logger: logger)
    }

    /// Every mirrored request, oldest first.
    static func pendingPairings(_ connection: PostgresConnection, logger: Logger) async throws -> [PendingPairing] {
        let rows = try await connection.query(
            """
            SELECT device_id, claimed_name, device_info, created_ms, expires_ms, protocol, request_id, reason
            FROM pending_pairings ORDER BY created_ms, device_id COLLATE "C"
            """,
            logger: logger
        )
        var entries: [PendingPairing] = []
        for try await (device, name, info, created, expires, protocolName, request, reason) in rows.decode(
            (String, String?, String?, Int64, Int64, String, String?, String?).self
        ) {
            entries.append(
                PendingPairing(
                    protocolName: protocolName,
                    requestID: request,
                    deviceID: device,
                    claimedName: name,
                    deviceInfoJSON: info,
                    reason: reason,
                    createdAt: created,
                    expiresAt: expires
                )
            )
        }
        return entries
    }
}
