import GRDB

/// Reading the audit table, for `clawrelay audit`, and pruning it.
///
/// The table has no time index (it cost every audited frame an index insert, a third of the
/// audit writer's SQLite work): rows are appended in time order, so the first row of a time is
/// found by a binary search over the rowid.
public enum AuditQueries {
    /// The id of the first row stored at or after `time` (nil when every row is older). Assumes
    /// times follow ids, as the writer appends them; after the wall clock stepped back, a few rows
    /// near the step may be placed on the wrong side.
    static func firstID(_ db: Database, atOrAfter time: Int64) throws -> Int64? {
        guard var low = try Int64.fetchOne(db, sql: "SELECT MIN(id) FROM audit"),
            var high = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM audit")
        else { return nil }
        func firstRow(from id: Int64) throws -> (id: Int64, time: Int64)? {
            try Row.fetchOne(db, sql: "SELECT id, time FROM audit WHERE id >= ? ORDER BY id LIMIT 1", arguments: [id]).map { ($0[0], $0[1]) }
        }
        guard let last = try firstRow(from: high), last.time >= time else { return nil }
        // The smallest id whose next stored row is at or after `time`.
        while low < high {
            let middle = low + (high - low) / 2
            if let row = try firstRow(from: middle), row.time >= time { high = middle } else { low = middle + 1 }
        }
        return try firstRow(from: low)?.id
    }

    /// Deletes the rows older than `time` (retention).
    static func prune(_ db: Database, before time: Int64) throws {
        if let first = try firstID(db, atOrAfter: time) {
            try db.execute(sql: "DELETE FROM audit WHERE id < ?", arguments: [first])
        } else {
            try db.execute(sql: "DELETE FROM audit")
        }
    }

    /// The rows after `afterID` that pass the filters, in id (time) order: the first `limit` of
    /// them, or with `newest` the last `limit` (what `clawrelay audit --limit N` prints, like
    /// `journalctl -n`). `deviceID` is a whole id or a prefix of one (the text output prints 8
    /// characters; `IDLookup.filter`).
    public static func fetch(
        _ log: AuditLog,
        since: Int64?,
        deviceID: String?,
        protocolName: String?,
        afterID: Int64,
        limit: Int,
        newest: Bool = false
    ) throws -> [AuditEntry] {
        var afterID = afterID
        if let since {
            // The rowid walk starts at the first row of `since`, not at the table's start.
            guard let first = try log.pool.read({ try firstID($0, atOrAfter: since) }) else { return [] }
            afterID = max(afterID, first - 1)
        }
        var clauses = ["id > ?"]
        var arguments: StatementArguments = [afterID]
        if let since {
            clauses.append("time >= ?")
            _ = arguments.append(contentsOf: [since])
        }
        if let deviceID {
            let filter = IDLookup.filter(column: "device_id", deviceID)
            clauses.append(filter.sql)
            _ = arguments.append(contentsOf: filter.arguments)
        }
        if let protocolName {
            clauses.append("protocol = ?")
            _ = arguments.append(contentsOf: [protocolName])
        }
        _ = arguments.append(contentsOf: [limit])
        let sql = "SELECT * FROM audit WHERE \(clauses.joined(separator: " AND ")) ORDER BY id \(newest ? "DESC" : "") LIMIT ?"
        let rows = try log.pool.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                var entry = AuditEntry(
                    timeMillis: row["time"],
                    connectionID: UInt64(row["connection"] as Int64),
                    protocolName: row["protocol"],
                    direction: row["direction"],
                    kind: row["kind"],
                    deviceID: row["device_id"],
                    userID: row["user_id"],
                    opcode: row["opcode"],
                    size: row["size"],
                    body: row["body"]
                )
                entry.id = row["id"]
                return entry
            }
        }
        return newest ? rows.reversed() : rows
    }
}
