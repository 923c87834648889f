import Logging
import PostgresNIO
import RelayCore

/// Where devices can be woken (one target per device and kind), the pushes waiting to go, and
/// every send attempt.
enum PostgresPushQueries {
    /// Stores (or replaces) a device's target; a retired one comes back to life.
    static func upsert(
        _ connection: PostgresConnection,
        deviceID: String,
        kind: String,
        token: String,
        platform: String?,
        at millis: Int64,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO push_targets (device_id, kind, token, platform, created_ms) VALUES (\(deviceID), \(kind), \(token), \(platform), \(millis))
            ON CONFLICT (device_id, kind) DO UPDATE SET token = excluded.token, platform = excluded.platform, created_ms = excluded.created_ms,
              retired_ms = NULL, retired_reason = NULL
            """,
            logger: logger
        )
    }

    /// Approved devices with live targets (joined with their owner), one device or all, by device
    /// id; targets of a kind this binary does not know are left out.
    static func devices(_ connection: PostgresConnection, deviceID: String? = nil, logger: Logger) async throws -> [PushDevice] {
        let select = """
            SELECT t.device_id, t.kind, t.token, t.created_ms, d.user_id, d.protocol
            FROM push_targets t JOIN devices d ON d.id = t.device_id
            WHERE t.retired_ms IS NULL AND d.status = 'approved'
            """
        let query: PostgresQuery =
            if let deviceID {
                "\(unescaped: select) AND t.device_id = \(deviceID) ORDER BY t.device_id COLLATE \"C\", t.kind COLLATE \"C\""
            } else {
                "\(unescaped: select) ORDER BY t.device_id COLLATE \"C\", t.kind COLLATE \"C\""
            }
        var devices: [PushDevice] = []
        let rows = try await connection.query(query, logger: logger)
        for try await (device, kind, token, created, user, protocolName) in rows.decode((String, String, String, Int64, String, String).self) {
            guard let kind = PushTarget.Kind(rawValue: kind) else { continue }
            let target = PushTarget(deviceID: device, kind: kind, token: token, registeredAt: created)
            if devices.last?.deviceID == device {
                devices[devices.count - 1].targets.append(target)
            } else {
                devices.append(PushDevice(deviceID: device, userID: user, protocolName: protocolName, targets: [target]))
            }
        }
        return devices
    }

    /// Retires `target` unless it was registered again since (its token or registration time moved).
    static func retire(_ connection: PostgresConnection, _ target: PushTarget, reason: String, at millis: Int64, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE push_targets SET retired_ms = \(millis), retired_reason = \(reason)
            WHERE device_id = \(target.deviceID) AND kind = \(target.kind.rawValue) AND token = \(target.token) AND created_ms <= \(target.registeredAt)
            """,
            logger: logger
        )
    }

    /// Stores a pending push, or updates the one with its id (its owner and creation time stay;
    /// a claim on it goes: it is not the push that was claimed any more).
    static func savePending(_ connection: PostgresConnection, _ push: PendingPush, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO push_pending (id, device_id, user_id, conversation_id, count, last_seq, failed, text, run_ms, created_ms, due_ms)
            VALUES (\(push.id), \(push.deviceID), \(push.userID), \(push.conversationID), \(push.count), \(push.lastSeq), \(push.failed),
              \(push.text), \(push.runMillis), \(push.createdAt), \(push.dueAt))
            ON CONFLICT (id) DO UPDATE SET count = excluded.count, last_seq = excluded.last_seq, failed = excluded.failed, text = excluded.text,
              run_ms = excluded.run_ms, due_ms = excluded.due_ms, claimed_by = NULL, claimed_until_ms = NULL
            """,
            logger: logger
        )
    }

    static func deletePending(_ connection: PostgresConnection, id: String, logger: Logger) async throws {
        try await connection.query("DELETE FROM push_pending WHERE id = \(id)", logger: logger)
    }

    /// Pushes not sent yet, soonest due first.
    static func pending(_ connection: PostgresConnection, logger: Logger) async throws -> [PendingPush] {
        try await pushes(connection, "SELECT \(unescaped: pendingColumns) FROM push_pending ORDER BY due_ms, id COLLATE \"C\"", logger: logger)
    }

    /// Claims `node`'s burst of a device in a conversation (`relay_claim_pushes`, migration 11).
    static func claim(
        _ connection: PostgresConnection,
        deviceID: String,
        conversationID: String,
        node: NodeIncarnation,
        now: Int64,
        until: Int64,
        logger: Logger
    ) async throws -> [PendingPush] {
        try await pushes(
            connection,
            """
            SELECT \(unescaped: pendingColumns)
            FROM relay_claim_pushes(\(deviceID), \(conversationID), \(node.node), \(node.incarnation), \(now), \(until))
            ORDER BY id COLLATE "C"
            """,
            logger: logger
        )
    }

    /// Deletes the pushes among `ids` that `node` still holds.
    static func deleteClaimed(_ connection: PostgresConnection, ids: [String], node: NodeIncarnation, logger: Logger) async throws {
        try await connection.query("DELETE FROM push_pending WHERE id = ANY(\(ids)) AND claimed_by = \(node.incarnation)", logger: logger)
    }

    /// Pushes due by `dueBefore` that no live node holds, the oldest of each device and
    /// conversation, at most `limit`.
    static func stranded(_ connection: PostgresConnection, dueBefore: Int64, now: Int64, limit: Int, logger: Logger) async throws -> [PendingPush] {
        try await pushes(
            connection,
            """
            SELECT * FROM (
              SELECT DISTINCT ON (device_id, conversation_id) \(unescaped: pendingColumns) FROM push_pending
              WHERE due_ms <= \(dueBefore) AND relay_push_free(claimed_by, claimed_until_ms, \(now))
              ORDER BY device_id, conversation_id, due_ms) AS oldest
            ORDER BY due_ms, id COLLATE "C" LIMIT \(limit)
            """,
            logger: logger
        )
    }

    private static let pendingColumns = "id, device_id, user_id, conversation_id, count, last_seq, failed, text, run_ms, created_ms, due_ms"

    /// The pending pushes `query` selects (`pendingColumns`, in order).
    private static func pushes(_ connection: PostgresConnection, _ query: PostgresQuery, logger: Logger) async throws -> [PendingPush] {
        let rows = try await connection.query(query, logger: logger)
        var pushes: [PendingPush] = []
        for try await (id, device, user, conversation, count, lastSeq, failed, text, run, created, due) in rows.decode(
            (String, String, String, String, Int, Int64, Bool, String, Int64, Int64, Int64).self
        ) {
            pushes.append(
                PendingPush(
                    id: id,
                    deviceID: device,
                    userID: user,
                    conversationID: conversation,
                    count: count,
                    lastSeq: lastSeq,
                    failed: failed,
                    text: text,
                    runMillis: run,
                    createdAt: created,
                    dueAt: due
                )
            )
        }
        return pushes
    }

    /// Records send attempts in one statement, keeping at most `keep` (the newest).
    static func record(_ connection: PostgresConnection, _ attempts: [PushAttempt], userID: String?, keep: Int = 100_000, logger: Logger) async throws
    {
        guard !attempts.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO push_attempts (at_ms, device_id, user_id, conversation_id, sink, target, status, outcome, reason)
            SELECT a.at, a.device, \(userID), a.conversation, a.sink, a.target, a.status, a.outcome, a.reason
            FROM unnest(\(attempts.map(\.timeMillis))::bigint[], \(attempts.map(\.deviceID))::text[], \(attempts.map(\.conversationID))::text[],
              \(attempts.map(\.sink))::text[], \(attempts.map(\.target))::text[], \(attempts.map { Int64($0.status) })::bigint[],
              \(attempts.map(\.outcome.rawValue))::text[], \(attempts.map(\.reason))::text[])
              WITH ORDINALITY AS a(at, device, conversation, sink, target, status, outcome, reason, n)
            ORDER BY a.n
            """,
            logger: logger
        )
        try await connection.query(
            "DELETE FROM push_attempts WHERE id <= (SELECT id FROM push_attempts ORDER BY id DESC LIMIT 1 OFFSET \(keep))",
            logger: logger
        )
    }

    /// Attempts in id order with the user each was recorded for (`clawrelay audit --protocol
    /// push`): the first `limit` after `afterID`, or with `newest` the last `limit`; only those
    /// from `since` on, and of `deviceID` (a whole id, or from `OperatorID.minimumPrefix`
    /// characters the ids it starts), when given.
    static func attempts(
        _ connection: PostgresConnection,
        since: Int64? = nil,
        deviceID: String? = nil,
        afterID: Int64 = 0,
        limit: Int = .max,
        newest: Bool = false,
        logger: Logger
    ) async throws -> [(id: Int64, userID: String?, attempt: PushAttempt)] {
        let isPrefix = (deviceID?.count ?? 0) >= OperatorID.minimumPrefix
        let (exact, prefix) = isPrefix ? (nil, deviceID) : (deviceID, nil)
        let length = Int32(prefix?.unicodeScalars.count ?? 0)
        let rows = try await connection.query(
            """
            SELECT id, at_ms, device_id, user_id, conversation_id, sink, target, status, outcome, reason FROM push_attempts
            WHERE id > \(afterID) AND (\(since)::bigint IS NULL OR at_ms >= \(since)) AND (\(exact)::text IS NULL OR device_id = \(exact))
              AND (\(prefix)::text IS NULL OR left(device_id, \(length)) = \(prefix))
            ORDER BY id \(unescaped: newest ? "DESC" : "") LIMIT \(limit)
            """,
            logger: logger
        )
        var attempts: [(id: Int64, userID: String?, attempt: PushAttempt)] = []
        for try await (id, at, device, user, conversation, sink, target, status, outcome, reason) in rows.decode(
            (Int64, Int64, String, String?, String, String, String, Int, String, String).self
        ) {
            let attempt = PushAttempt(
                timeMillis: at,
                deviceID: device,
                conversationID: conversation,
                sink: sink,
                target: target,
                status: status,
                outcome: PushAttempt.Outcome(rawValue: outcome) ?? .failed,
                reason: reason
            )
            attempts.append((id, user, attempt))
        }
        return newest ? attempts.reversed() : attempts
    }

    /// Removes a device's target of `kind`; true when there was one.
    static func remove(_ connection: PostgresConnection, deviceID: String, kind: String, logger: Logger) async throws -> Bool {
        try await connection.first(
            "DELETE FROM push_targets WHERE device_id = \(deviceID) AND kind = \(kind) RETURNING 1",
            as: Int32.self,
            logger: logger
        ) != nil
    }

    /// Every target, retired ones included, by device (`clawrelay devices list`; tokens redacted).
    static func listing(_ connection: PostgresConnection, logger: Logger) async throws -> [String: [PushTargetListing]] {
        let rows = try await connection.query(
            """
            SELECT device_id, kind, token, created_ms, retired_ms, retired_reason FROM push_targets
            ORDER BY device_id COLLATE "C", kind COLLATE "C"
            """,
            logger: logger
        )
        var listing: [String: [PushTargetListing]] = [:]
        for try await (device, kind, token, created, retired, reason) in rows.decode((String, String, String, Int64, Int64?, String?).self) {
            guard let kind = PushTarget.Kind(rawValue: kind) else { continue }
            let target = PushTarget(deviceID: device, kind: kind, token: token, registeredAt: created)
            listing[device, default: []].append(PushTargetListing(target: target.redacted, retiredAt: retired, reason: reason))
        }
        return listing
    }
}
