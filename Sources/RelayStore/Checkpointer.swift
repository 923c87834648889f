import Foundation
import GRDB
import Synchronization

/// Copies the write-ahead log into the database file on a thread of its own, so no commit waits
/// for it.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold: on a busy
/// relay every second commit also copied the log and synced the database file (2–15 ms), and the
/// messages of that batch waited for it. The writer's connection turns that off
/// (`wal_autocheckpoint = 0`); this thread runs a passive checkpoint from its own connection every
/// `intervalMillis`, which never blocks the writer. When the log passes `truncatePages` (a
/// checkpoint that keeps falling behind a reader), a truncating checkpoint waits for the writer and
/// shrinks it. Durability is unchanged: every commit still syncs the log (`synchronous = FULL`),
/// and a checkpoint syncs the database before the log is reused.
final class Checkpointer: Sendable {
    private let connection: DatabaseQueue
    private let intervalMillis: Int
    private let truncatePages: Int
    private let stopped = Atomic<Bool>(false)
    private let wakeup = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let checkpoints = Atomic<Int>(0)

    init(path: String, fullSync: Bool, intervalMillis: Int = 200, truncatePages: Int = 16_384) throws {
        connection = try DatabaseQueue(path: path, configuration: DatabaseOpener.connectionConfiguration(fullSync: fullSync))
        try DatabaseOpener.applySync(fullSync, to: connection)
        self.intervalMillis = intervalMillis
        self.truncatePages = truncatePages
        let thread = Thread { [self] in
            Thread.nameCurrent("store-ckpt")
            run()
        }
        thread.name = "store-ckpt"
        thread.start()
    }

    /// Checkpoints run so far (for tests and `/metrics`).
    var count: Int { checkpoints.load(ordering: .relaxed) }

    /// Runs a last checkpoint and stops the thread.
    func stop() {
        stopped.store(true, ordering: .releasing)
        wakeup.signal()
        done.wait()
    }

    private func run() {
        while !stopped.load(ordering: .acquiring) {
            _ = wakeup.wait(timeout: .now() + .milliseconds(intervalMillis))
            checkpoint()
        }
        done.signal()
    }

    private func checkpoint() {
        do {
            try connection.writeWithoutTransaction { db in
                // (busy, pages in the log, pages copied)
                let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
                let logPages: Int = row?[1] ?? 0
                if logPages > truncatePages { try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            }
            checkpoints.add(1, ordering: .relaxed)
        } catch {
            // A failed checkpoint leaves the log longer; the next one retries.
        }
    }
}
