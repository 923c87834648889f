import Foundation
import GRDB

enum DatabaseOpener {
    /// How every connection of the relay's databases waits for locks and syncs its commits.
    static func connectionConfiguration(fullSync: Bool) -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: fullSync ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        }
        return configuration
    }

    /// Sets the writer connection's `synchronous` once the database is open. GRDB switches a WAL
    /// writer to NORMAL after the preparation functions have run (NORMAL does not sync the log on
    /// commit), so the setting made in `prepareDatabase` alone never reached the writer.
    static func applySync(_ fullSync: Bool, to writer: some DatabaseWriter) throws {
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: fullSync ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        }
    }

    /// The relay store writer's page cache: the relay's working set (recent events, messages, their
    /// indexes) stays in memory instead of being read back from the log on every batch. The audit
    /// log appends only, so its writer keeps SQLite's default (2 MiB): a large cache there would
    /// just keep every audit page written since start.
    static let storeWriterCacheKiB = 65_536

    /// Opens (creating if needed) a WAL database and runs its migrations. With `ownCheckpoints`
    /// the writer never checkpoints in a commit (a `Checkpointer` does it off the commit path).
    static func open(
        path: String,
        migrator: DatabaseMigrator,
        fullSync: Bool = true,
        ownCheckpoints: Bool = false,
        writerCacheKiB: Int? = nil
    ) throws -> DatabasePool {
        var configuration = connectionConfiguration(fullSync: fullSync)
        configuration.prepareDatabase { db in
            if !db.configuration.readonly {
                if let writerCacheKiB { try db.execute(sql: "PRAGMA cache_size = -\(writerCacheKiB)") }
                if ownCheckpoints { try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
            }
        }
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            try applySync(fullSync, to: pool)
            try migrator.migrate(pool)
            chmod(path, 0o600)
            return pool
        } catch {
            throw StoreError("cannot open database \(path): \(error)")
        }
    }
}
