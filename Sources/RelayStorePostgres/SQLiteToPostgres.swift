import Foundation
import GRDB
import Logging
import PostgresNIO
import RelayStore

/// Copies a relay's SQLite store into an empty PostgreSQL database (`clawrelay migrate
/// --to-postgres`): devices and their tokens, pairings, push, assets, accounts, run reports and
/// approvals, conversations and their keys, read cursors, the log with its ids and seqs, message
/// records and the notification queues (`TableCopy.all`), so a device paired before keeps working.
///
/// The database is migrated to the current schema first (those migrations commit on their own:
/// an empty database stays empty), then everything is copied in one transaction, all or nothing,
/// in multi-row `INSERT`s, read from one SQLite snapshot. A database that holds relay data, or
/// tables that are not clawrelay's, is refused. An upload's bytes go in too (`asset_bytes`, so
/// every node of a cluster can serve it), up to `maxAssetBytes` each; the files stay. Files in the
/// data directory (the JWT signing key, the gateway identity, account files, uploads, the audit)
/// are not the store's: they stay.
///
/// - Important: blocking; run it on a thread of its own, never on the cooperative pool.
public enum SQLiteToPostgres {
    /// Rows copied into one PostgreSQL table.
    public struct TableCount: Sendable, Equatable {
        public var table: String
        public var rows: Int
    }

    /// Copies `store` into the database `settings` names; `progress` hears of each table once it
    /// is copied (before the commit). Returns the rows copied per table.
    public static func copy(
        from store: Store,
        to settings: PostgresSettings,
        now: Int64,
        maxAssetBytes: Int,
        logger: Logger,
        progress: (TableCount) -> Void = { _ in }
    ) throws -> [TableCount] {
        let target = try PostgresTarget(settings: settings, logger: logger)
        defer { target.close() }
        try target.run("check the database") { connection, logger in try await refuseForeignTables(connection, logger: logger) }
        try target.run("migrate the schema") { connection, logger in try await PostgresMigrations.migrate(connection, logger: logger) }
        try target.execute("BEGIN", "begin the copy")
        do {
            try target.execute("SELECT pg_advisory_xact_lock(hashtext('clawrelay-migrate'))", "wait for another copy")
            try target.run("check the database") { connection, logger in try await refuseRelayData(connection, logger: logger) }
            let counts = try store.read { db in
                var counts = try copyTables(db, into: target, now: now, progress: progress)
                counts.append(TableCount(table: "asset_bytes", rows: try copyUploads(db, into: target, maxBytes: maxAssetBytes, logger: logger)))
                progress(counts[counts.count - 1])
                return counts
            }
            // The serial ids go on after the copied ones.
            for table in ["push_attempts", "operator_commands"] {
                try target.execute(
                    "SELECT setval(pg_get_serial_sequence('\(table)', 'id'), max(id)) FROM \(table) HAVING max(id) IS NOT NULL",
                    "set the ids of \(table)"
                )
            }
            try target.execute("COMMIT", "commit the copy")
            return counts
        } catch {
            try? target.execute("ROLLBACK", "roll the copy back")
            throw error
        }
    }

    private static func copyTables(
        _ db: Database,
        into target: PostgresTarget,
        now: Int64,
        progress: (TableCount) -> Void
    ) throws -> [TableCount] {
        var counts: [TableCount] = []
        func count(_ table: String, _ rows: Int) {
            if let last = counts.indices.last, counts[last].table == table {
                counts[last].rows += rows
            } else {
                counts.append(TableCount(table: table, rows: rows))
            }
        }
        for (index, spec) in TableCopy.all.enumerated() {
            var batch = CopyBatch(table: spec.table, columns: spec.columns)
            let rows = try Row.fetchCursor(db, sql: spec.select)
            var copied = 0
            while let row = try rows.next() {
                try batch.append(spec.columns.indices.map { try CopyValue(row[$0] as DatabaseValue, for: spec.columns[$0], table: spec.table) })
                copied += 1
                if batch.isFull { try target.send(&batch) }
            }
            try target.send(&batch)
            count(spec.table, copied)
            // A table copied in parts (the log's events, then its failures) is reported once.
            if index + 1 == TableCopy.all.count || TableCopy.all[index + 1].table != spec.table { progress(counts[counts.count - 1]) }
        }
        var batch = CopyBatch(table: "queue_entries", columns: queueColumns)
        var queued = 0
        try queueRows(db, at: now) { row in
            batch.append(row)
            queued += 1
            if batch.isFull { try target.send(&batch) }
        }
        try target.send(&batch)
        count("queue_entries", queued)
        progress(counts[counts.count - 1])
        return counts
    }

    /// The bytes of each upload whose file is still there and at most `maxBytes` long, one row at
    /// a time (never more than one file in memory); returns how many went in. A missing or larger
    /// file is left out with a warning: that node's copy keeps serving it, the others cannot.
    private static func copyUploads(_ db: Database, into target: PostgresTarget, maxBytes: Int, logger: Logger) throws -> Int {
        let rows = try Row.fetchCursor(db, sql: "SELECT id, path, size FROM assets ORDER BY id")
        var copied = 0
        while let row = try rows.next() {
            let (id, path): (String, String) = (row["id"], row["path"])
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
            guard let size, size <= maxBytes, let bytes = FileManager.default.contents(atPath: path) else {
                logger.warning(
                    "migrate: an upload's bytes stay in the data directory only",
                    metadata: ["asset": "\(id)", "why": "\(size == nil ? "its file is missing" : "larger than max_shared_asset_bytes")"]
                )
                continue
            }
            try target.run("copy an upload's bytes") { connection, logger in
                _ = try await connection.query("INSERT INTO asset_bytes (asset_id, bytes) VALUES (\(id), \(bytes))", logger: logger)
            }
            copied += 1
        }
        return copied
    }

    /// A database with tables but no clawrelay schema is someone else's.
    private static func refuseForeignTables(_ connection: PostgresConnection, logger: Logger) async throws {
        let tables = try await tableNames(connection, logger: logger)
        guard !tables.isEmpty, !tables.contains("schema_migrations") else { return }
        throw PostgresStoreError(
            code: .rejected,
            message:
                "the database holds tables that are not clawrelay's (\(tables.prefix(5).joined(separator: ", "))); migrate needs an empty database"
        )
    }

    /// Any row in a relay table (a relay ran on it, or an earlier copy went in) refuses the copy.
    private static func refuseRelayData(_ connection: PostgresConnection, logger: Logger) async throws {
        var found: [String] = []
        for table in try await tableNames(connection, logger: logger) where table != "schema_migrations" {
            let rows = try await connection.first(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \"\(table)\""), as: Int64.self, logger: logger)
            if let rows, rows > 0 { found.append("\(table): \(rows) row\(rows == 1 ? "" : "s")") }
        }
        guard !found.isEmpty else { return }
        throw PostgresStoreError(
            code: .rejected,
            message: "the database already holds relay data (\(found.prefix(6).joined(separator: ", "))); migrate copies only into an empty database"
        )
    }

    private static func tableNames(_ connection: PostgresConnection, logger: Logger) async throws -> [String] {
        try await names(
            connection,
            logger: logger,
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1"
        )
    }

    private static func names(_ connection: PostgresConnection, logger: Logger, _ sql: String) async throws -> [String] {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        var names: [String] = []
        for try await name in rows.decode(String.self) { names.append(name) }
        return names
    }
}
