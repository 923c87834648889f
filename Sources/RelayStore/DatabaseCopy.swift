import Foundation
import GRDB

/// A consistent copy of a live SQLite database, through SQLite's online backup API.
///
/// The source is read inside one read transaction, so the copy is the database as it was at one
/// commit however long the copy takes, while the relay goes on writing (WAL readers never block
/// its writer, nor it them). The copy is checked (`PRAGMA quick_check`) and left without a log
/// beside it. Nothing in the source changes: no migration runs, no checkpoint is forced.
public enum DatabaseCopy {
    /// Pages copied per backup step (4 MiB at SQLite's default page size): the granularity of
    /// `progress`.
    public static let defaultPagesPerStep: CInt = 1024

    /// Copies the database at `source` to a new file at `destination` (which must not exist).
    /// `progress(copiedPages, totalPages)` is called after each step; throwing from it stops the copy.
    public static func copy(
        from source: String,
        to destination: String,
        pagesPerStep: CInt = defaultPagesPerStep,
        progress: (Int, Int) throws -> Void
    ) throws {
        guard !FileManager.default.fileExists(atPath: destination) else { throw StoreError("\(destination) already exists") }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        do {
            let reader = try DatabaseQueue(path: source, configuration: configuration)
            let copy = try DatabaseQueue(path: destination)
            try copy.writeWithoutTransaction { destination in
                try reader.inDatabase { db in
                    // One snapshot for every step: the backup reads through this transaction, so
                    // commits made meanwhile neither show up halfway nor restart it.
                    try db.execute(sql: "BEGIN DEFERRED")
                    defer { try? db.execute(sql: "ROLLBACK") }
                    _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
                    try withoutActuallyEscaping(progress) { progress in
                        try db.backup(to: destination, pagesPerStep: pagesPerStep) { step in
                            try progress(step.completedPageCount, step.totalPageCount)
                        }
                    }
                }
                let check = try String.fetchAll(destination, sql: "PRAGMA quick_check")
                guard check == ["ok"] else {
                    throw StoreError("the copy of \(source) fails SQLite's check: \(check.prefix(3).joined(separator: "; "))")
                }
            }
            try copy.close()
            try reader.close()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError("cannot copy \(source): \(error)")
        }
        chmod(destination, 0o600)
    }
}
