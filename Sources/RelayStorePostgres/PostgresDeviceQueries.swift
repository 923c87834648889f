import Logging
import PostgresNIO
import RelayCore

/// Device and user rows (`devices`, `users`); each runs in the caller's transaction, if any.
enum PostgresDeviceQueries {
    static let columns = """
        id, user_id, protocol, claimed_name, device_info, is_admin, status, token_hash, token_delivered, created_ms, last_seen_ms,
        public_key, role, scopes, presence
        """

    /// A device by id, nil when unknown; `lock` holds its row until the transaction ends, so two
    /// nodes' changes to one device run one after the other.
    static func device(_ connection: PostgresConnection, id: String, lock: Bool = false, logger: Logger) async throws -> DeviceRecord? {
        let query: PostgresQuery =
            lock
            ? "SELECT \(unescaped: columns) FROM devices WHERE id = \(id) FOR UPDATE"
            : "SELECT \(unescaped: columns) FROM devices WHERE id = \(id)"
        return try await records(connection.query(query, logger: logger)).first
    }

    /// The device of a protocol whose bearer token has this SHA-256 (`devices_token` index).
    static func device(_ connection: PostgresConnection, tokenHash: String, protocolName: String, logger: Logger) async throws -> DeviceRecord? {
        let query: PostgresQuery = "SELECT \(unescaped: columns) FROM devices WHERE token_hash = \(tokenHash) AND protocol = \(protocolName) LIMIT 1"
        return try await records(connection.query(query, logger: logger)).first
    }

    /// Every device, oldest first (what the relay preloads).
    static func all(_ connection: PostgresConnection, logger: Logger) async throws -> [DeviceRecord] {
        try await records(connection.query("SELECT \(unescaped: columns) FROM devices ORDER BY created_ms, id COLLATE \"C\"", logger: logger))
    }

    /// The devices of one protocol, oldest first.
    static func all(_ connection: PostgresConnection, protocolName: String, logger: Logger) async throws -> [DeviceRecord] {
        try await records(
            connection.query(
                "SELECT \(unescaped: columns) FROM devices WHERE protocol = \(protocolName) ORDER BY created_ms, id COLLATE \"C\"",
                logger: logger
            )
        )
    }

    /// Approved devices of a user that speak `protocolName`.
    static func count(_ connection: PostgresConnection, userID: String, protocolName: String, logger: Logger) async throws -> Int {
        let rows = try await connection.query(
            "SELECT count(*) FROM devices WHERE user_id = \(userID) AND protocol = \(protocolName) AND status = 'approved'",
            logger: logger
        )
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    static func hasAdmin(_ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query("SELECT EXISTS (SELECT 1 FROM devices WHERE is_admin AND status = 'approved')", logger: logger)
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }

    /// Stores the record whole (insert or replace; its protocol never changes), and its user.
    static func store(_ connection: PostgresConnection, _ device: DeviceRecord, logger: Logger) async throws {
        // A device revoked before it was approved belongs to no user ("").
        if !device.userID.isEmpty {
            try await connection.query(
                "INSERT INTO users (id, created_ms) VALUES (\(device.userID), \(device.createdAt)) ON CONFLICT (id) DO NOTHING",
                logger: logger
            )
        }
        let scopes = device.scopes.isEmpty ? nil : device.scopes.joined(separator: ",")
        try await connection.query(
            """
            INSERT INTO devices (id, user_id, protocol, claimed_name, device_info, is_admin, status, token_hash, token_delivered, created_ms,
              last_seen_ms, public_key, role, scopes)
            VALUES (\(device.id), \(device.userID), \(device.protocolName), \(device.claimedName), \(device.deviceInfoJSON), \(device.isAdmin),
              \(device.status.rawValue), \(device.tokenHash), \(device.tokenDelivered), \(device.createdAt), \(device.lastSeenAt),
              \(device.publicKey), \(device.role), \(scopes))
            ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, claimed_name = excluded.claimed_name, device_info = excluded.device_info,
              is_admin = excluded.is_admin, status = excluded.status, token_hash = excluded.token_hash,
              token_delivered = excluded.token_delivered, created_ms = excluded.created_ms, last_seen_ms = excluded.last_seen_ms,
              public_key = excluded.public_key, role = excluded.role, scopes = excluded.scopes
            """,
            logger: logger
        )
    }

    /// Stores when devices were last seen, in one statement; unknown ids are ignored.
    static func touch(_ connection: PostgresConnection, _ seen: [String: Int64], logger: Logger) async throws {
        guard !seen.isEmpty else { return }
        let ids = Array(seen.keys)
        try await connection.query(
            """
            UPDATE devices d SET last_seen_ms = s.at FROM unnest(\(ids)::text[], \(ids.map { seen[$0] ?? 0 })::bigint[]) AS s(id, at)
            WHERE d.id = s.id
            """,
            logger: logger
        )
    }

    /// What the running relay last saw of a device (`CoreJournal.recordPresence` in SQLite).
    static func setPresence(
        _ connection: PostgresConnection,
        deviceID: String,
        _ state: DevicePresence.State,
        at millis: Int64,
        logger: Logger
    ) async throws {
        try await connection.query(
            "UPDATE devices SET presence = \(state.rawValue), presence_ms = \(millis) WHERE id = \(deviceID)",
            logger: logger
        )
    }

    /// Nobody is connected to a relay that is starting.
    ///
    /// - Important: with several nodes this also clears devices connected to the others; the
    ///   cluster's presence lives in `device_sessions` (SCALE-OUT.md §4.3), not here.
    static func resetPresence(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("UPDATE devices SET presence = 'offline' WHERE presence <> 'offline'", logger: logger)
    }

    /// Sets a device's status (`clawrelay devices deny|revoke|allow`); false when there is no such device.
    static func setStatus(_ connection: PostgresConnection, id: String, _ status: DeviceRecord.Status, logger: Logger) async throws -> Bool {
        try await connection.first("UPDATE devices SET status = \(status.rawValue) WHERE id = \(id) RETURNING 1", as: Int32.self, logger: logger)
            != nil
    }

    /// Makes the device an admin, or not. False when there is no such approved device.
    static func setAdmin(_ connection: PostgresConnection, id: String, _ isAdmin: Bool, logger: Logger) async throws -> Bool {
        try await connection.first(
            "UPDATE devices SET is_admin = \(isAdmin) WHERE id = \(id) AND status = 'approved' RETURNING 1",
            as: Int32.self,
            logger: logger
        ) != nil
    }

    private static func records(_ rows: PostgresRowSequence) async throws -> [DeviceRecord] {
        var records: [DeviceRecord] = []
        for try await row in rows {
            let row = row.makeRandomAccess()
            var record = DeviceRecord(
                id: try row["id"].decode(String.self),
                userID: try row["user_id"].decode(String.self),
                protocolName: try row["protocol"].decode(String.self),
                claimedName: try row["claimed_name"].decode(String?.self),
                deviceInfoJSON: try row["device_info"].decode(String?.self),
                isAdmin: try row["is_admin"].decode(Bool.self),
                status: DeviceRecord.Status(rawValue: try row["status"].decode(String.self)) ?? .revoked,
                tokenHash: try row["token_hash"].decode(String?.self),
                tokenDelivered: try row["token_delivered"].decode(Bool.self),
                createdAt: try row["created_ms"].decode(Int64.self),
                lastSeenAt: try row["last_seen_ms"].decode(Int64?.self)
            )
            record.publicKey = try row["public_key"].decode(String?.self)
            record.role = try row["role"].decode(String?.self)
            record.scopes = splitList(try row["scopes"].decode(String?.self))
            record.presence = try row["presence"].decode(String.self)
            records.append(record)
        }
        return records
    }
}

/// A comma-separated list as stored (`scopes`), empty for NULL.
func splitList(_ text: String?) -> [String] {
    (text ?? "").split(separator: ",").map(String.init)
}
