import Foundation
import GRDB

enum DatabaseOpener {
    /// Opens (creating if needed) a WAL database and runs its migrations.
    static func open(path: String, migrator: DatabaseMigrator, fullSync: Bool = true) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: fullSync ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        }
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            try migrator.migrate(pool)
            chmod(path, 0o600)
            return pool
        } catch {
            throw StoreError("cannot open database \(path): \(error)")
        }
    }
}
