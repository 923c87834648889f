import Logging
import PostgresNIO
import RelayCore

/// The newest operator command, and the mirror of pending pairing requests (`pending_pairings`)
/// that `clawrelay devices list` shows: each row names the node incarnation that holds the
/// request (none for a relay on its own); rows of dead nodes are not shown. The commands
/// themselves are `PostgresControlQueries`'.
enum PostgresOperatorQueries {
    static func lastID(_ connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        let rows = try await connection.query("SELECT coalesce(max(id), 0)::bigint FROM operator_commands", logger: logger)
        for try await id in rows.decode(Int64.self) { return id }
        return 0
    }

    /// Forgets every mirrored pending request (a relay on its own starting: they lived only in
    /// its last run).
    static func clearPending(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("DELETE FROM pending_pairings", logger: logger)
    }

    /// Forgets the requests earlier runs of cluster node `node` held (a node starting).
    static func clearPending(_ connection: PostgresConnection, node: String, logger: Logger) async throws {
        try await connection.query("DELETE FROM pending_pairings WHERE node_id = \(node)", logger: logger)
    }

    /// Adds (or replaces) one pending request's row, held by `holder` (nil: a relay on its own).
    static func upsertPending(_ connection: PostgresConnection, _ entry: PendingPairing, holder: NodeIncarnation?, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO pending_pairings (device_id, claimed_name, device_info, created_ms, expires_ms, protocol, request_id, reason, node_id, incarnation)
            VALUES (\(entry.deviceID), \(entry.claimedName), \(entry.deviceInfoJSON), \(entry.createdAt), \(entry.expiresAt), \(entry.protocolName),
              \(entry.requestID), \(entry.reason), \(holder?.node), \(holder?.incarnation))
            ON CONFLICT (device_id) DO UPDATE SET claimed_name = excluded.claimed_name, device_info = excluded.device_info,
              created_ms = excluded.created_ms, expires_ms = excluded.expires_ms, protocol = excluded.protocol,
              request_id = excluded.request_id, reason = excluded.reason, node_id = excluded.node_id, incarnation = excluded.incarnation
            """,
            logger: logger
        )
    }

    /// Removes the request's row if `holder` holds it (a newer request of the device on another
    /// node replaced it otherwise).
    static func removePending(
        _ connection: PostgresConnection,
        deviceID: String,
        protocolName: String,
        holder: NodeIncarnation?,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            DELETE FROM pending_pairings
            WHERE device_id = \(deviceID) AND protocol = \(protocolName) AND incarnation IS NOT DISTINCT FROM \(holder?.incarnation)
            """,
            logger: logger
        )
    }

    /// Every request a live node (or a relay on its own) holds, oldest first.
    static func pendingPairings(_ connection: PostgresConnection, logger: Logger) async throws -> [PendingPairing] {
        let rows = try await connection.query(
            """
            SELECT device_id, claimed_name, device_info, created_ms, expires_ms, protocol, request_id, reason
            FROM pending_pairings
            WHERE incarnation IS NULL OR incarnation IN (SELECT incarnation FROM (\(unescaped: PostgresControlQueries.liveNodes)) live)
            ORDER BY created_ms, device_id COLLATE "C"
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
