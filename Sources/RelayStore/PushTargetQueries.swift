import GRDB
import RelayCore

/// Where devices can be woken (one target per device and kind), the pushes waiting to go, and
/// every send attempt.
public enum PushTargetQueries {
    /// Stores (or replaces) a device's target; a retired one comes back to life.
    public static func upsert(_ db: Database, deviceID: String, kind: String, token: String, platform: String?, at millis: Int64) throws {
        try db.run(
            """
            INSERT INTO push_targets (device_id, kind, token, platform, created_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(device_id, kind) DO UPDATE SET token = excluded.token, platform = excluded.platform, created_at = excluded.created_at,
                retired_at = NULL, retired_reason = NULL
            """,
            [deviceID, kind, token, platform, millis]
        )
    }

    /// Removes a device's target of `kind`; true when there was one.
    public static func remove(_ db: Database, deviceID: String, kind: String) throws -> Bool {
        try db.run("DELETE FROM push_targets WHERE device_id = ? AND kind = ?", [deviceID, kind])
        return db.changesCount > 0
    }

    /// Devices with live targets (joined with their owner), one device or all.
    public static func devices(_ db: Database, deviceID: String? = nil) throws -> [PushDevice] {
        var sql = """
            SELECT t.device_id, t.kind, t.token, t.created_at, d.user_id, d.protocol
            FROM push_targets t JOIN devices d ON d.id = t.device_id
            WHERE t.retired_at IS NULL AND d.status = 'approved'
            """
        var arguments: [any DatabaseValueConvertible] = []
        if let deviceID {
            sql += " AND t.device_id = ?"
            arguments.append(deviceID)
        }
        sql += " ORDER BY t.device_id, t.kind"
        var devices: [PushDevice] = []
        for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)) {
            guard let kind = PushTarget.Kind(rawValue: row["kind"]) else { continue }
            let target = PushTarget(deviceID: row["device_id"], kind: kind, token: row["token"], registeredAt: row["created_at"])
            if devices.last?.deviceID == target.deviceID {
                devices[devices.count - 1].targets.append(target)
            } else {
                devices.append(PushDevice(deviceID: target.deviceID, userID: row["user_id"], protocolName: row["protocol"], targets: [target]))
            }
        }
        return devices
    }

    /// Every target, retired ones included, for `clawrelay devices list` (tokens redacted).
    public static func listing(_ db: Database) throws -> [String: [(target: String, retiredAt: Int64?, reason: String?)]] {
        var out: [String: [(target: String, retiredAt: Int64?, reason: String?)]] = [:]
        for row in try db.rows("SELECT device_id, kind, token, created_at, retired_at, retired_reason FROM push_targets ORDER BY device_id, kind", [])
        {
            guard let kind = PushTarget.Kind(rawValue: row["kind"]) else { continue }
            let target = PushTarget(deviceID: row["device_id"], kind: kind, token: row["token"], registeredAt: row["created_at"])
            out[target.deviceID, default: []].append((target.redacted, row["retired_at"], row["retired_reason"]))
        }
        return out
    }

    /// Retires `target` unless it was registered again after `at` (the service's verdict time).
    public static func retire(_ db: Database, _ target: PushTarget, reason: String, at millis: Int64) throws {
        try db.run(
            "UPDATE push_targets SET retired_at = ?, retired_reason = ? WHERE device_id = ? AND kind = ? AND token = ? AND created_at <= ?",
            [millis, reason, target.deviceID, target.kind.rawValue, target.token, target.registeredAt]
        )
    }

    public static func savePending(_ db: Database, _ push: PendingPush) throws {
        try db.run(
            """
            INSERT INTO push_pending (id, device_id, user_id, conversation_id, count, last_seq, failed, text, run_millis, created_at, due_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET count = excluded.count, last_seq = excluded.last_seq, failed = excluded.failed, text = excluded.text,
                run_millis = excluded.run_millis, due_at = excluded.due_at
            """,
            [
                push.id, push.deviceID, push.userID, push.conversationID, push.count, push.lastSeq, push.failed, push.text, push.runMillis,
                push.createdAt, push.dueAt,
            ]
        )
    }

    public static func deletePending(_ db: Database, id: String) throws { try db.run("DELETE FROM push_pending WHERE id = ?", [id]) }

    public static func pending(_ db: Database) throws -> [PendingPush] {
        try db.rows("SELECT * FROM push_pending ORDER BY due_at", []).map { row in
            PendingPush(
                id: row["id"],
                deviceID: row["device_id"],
                userID: row["user_id"],
                conversationID: row["conversation_id"],
                count: row["count"],
                lastSeq: row["last_seq"],
                failed: row["failed"],
                text: row["text"],
                runMillis: row["run_millis"],
                createdAt: row["created_at"],
                dueAt: row["due_at"]
            )
        }
    }

    /// Keeps at most `keep` attempts (the newest).
    public static func record(_ db: Database, _ attempts: [PushAttempt], userID: String?, keep: Int = 100_000) throws {
        for attempt in attempts {
            try db.run(
                "INSERT INTO push_attempts (at, device_id, user_id, conversation_id, sink, target, status, outcome, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    attempt.timeMillis, attempt.deviceID, userID, attempt.conversationID, attempt.sink, attempt.target, attempt.status,
                    attempt.outcome.rawValue, attempt.reason,
                ]
            )
        }
        try db.run(
            "DELETE FROM push_attempts WHERE id <= (SELECT id FROM push_attempts ORDER BY id DESC LIMIT 1 OFFSET ?)",
            [keep]
        )
    }

    /// Attempts in id order, for `clawrelay audit --protocol push`: the first `limit` after
    /// `afterID`, or with `newest` the last `limit`.
    public static func attempts(
        _ db: Database,
        since: Int64?,
        deviceID: String?,
        afterID: Int64,
        limit: Int,
        newest: Bool = false
    ) throws -> [(id: Int64, userID: String?, attempt: PushAttempt)] {
        var sql = "SELECT * FROM push_attempts WHERE id > ?"
        var arguments: StatementArguments = [afterID]
        if let since {
            sql += " AND at >= ?"
            _ = arguments.append(contentsOf: [since])
        }
        if let deviceID {
            let filter = IDLookup.filter(column: "device_id", deviceID)
            sql += " AND " + filter.sql
            _ = arguments.append(contentsOf: filter.arguments)
        }
        sql += newest ? " ORDER BY id DESC LIMIT ?" : " ORDER BY id LIMIT ?"
        _ = arguments.append(contentsOf: [limit])
        let rows = try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            let attempt = PushAttempt(
                timeMillis: row["at"],
                deviceID: row["device_id"],
                conversationID: row["conversation_id"],
                sink: row["sink"],
                target: row["target"],
                status: row["status"],
                outcome: PushAttempt.Outcome(rawValue: row["outcome"]) ?? .failed,
                reason: row["reason"]
            )
            return (id: row["id"] as Int64, userID: row["user_id"] as String?, attempt: attempt)
        }
        return newest ? rows.reversed() : rows
    }
}
