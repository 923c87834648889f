import Foundation
import GRDB
import Synchronization

/// Copies the write-ahead log into the database file, on the store writer's thread between its
/// batches, at most every `intervalMillis`.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold, so the writer
/// turns it off (`wal_autocheckpoint = 0`). A checkpoint thread of its own (the relay's until
/// issue 26) never blocked the writer's SQL, but its syncs did: while SQLite synced the log and
/// the database file under the checkpoint's locks, the writer's commits stalled 20–30 ms, five
/// times a second, and that was the relay's p99 at every load (33–45 ms at 700 messages a second,
/// 6–7 ms with this). Here:
/// - the checkpoint runs with SQLite's syncs off: every commit already synced the log
///   (`synchronous = FULL`), and the database file is synced right after (`fdatasync`);
/// - until that sync the log must not start over (it still holds the only durable copy of the
///   pages just copied): this thread is the relay's only writer and runs its next batch after the
///   sync, and `guard` holds the write lock meanwhile, so no other process (the CLI) writes either.
///
/// When the log passes `truncatePages` (a checkpoint that keeps falling behind a reader), a
/// truncating checkpoint with SQLite's own syncs shrinks it.
final class Checkpointer {
    private let path: String
    private let guardConnection: DatabaseQueue?
    private let intervalNanos: UInt64
    private let truncatePages: Int
    private var last: UInt64 = 0
    private let count = Atomic<Int>(0)

    init(path: String, fullSync: Bool, intervalMillis: Int = 200, truncatePages: Int = 16_384) throws {
        self.path = path
        self.intervalNanos = UInt64(intervalMillis) * 1_000_000
        self.truncatePages = truncatePages
        // The guard never waits: while another process writes, this checkpoint is skipped.
        var guarded = DatabaseOpener.connectionConfiguration(fullSync: true)
        guarded.busyMode = .immediateError
        guardConnection = fullSync ? try DatabaseQueue(path: path, configuration: guarded) : nil
        // Every file it will use is opened now, not at the first checkpoint: a relay's open files
        // settle at start-up (what an operator and the fd-leak tests compare against).
        _ = try guardConnection?.read { try Int.fetchOne($0, sql: "SELECT 1 FROM sqlite_master LIMIT 1") }
        if fullSync { _ = try file() }
    }

    /// Checkpoints run so far (for tests and `/metrics`).
    var checkpoints: Int { count.load(ordering: .relaxed) }

    /// Runs a checkpoint on the writer's connection if the last one is `intervalMillis` old (or
    /// `force`). Writer thread only, between batches.
    func afterBatch(_ pool: DatabasePool, stats: StoreStats, force: Bool = false) {
        let now = DispatchTime.now().uptimeNanoseconds
        guard force || now - last >= intervalNanos else { return }
        last = now
        var logPages = 0
        var skipped = false
        defer { stats.recordCheckpoint(nanoseconds: DispatchTime.now().uptimeNanoseconds - now, logPages: logPages, skipped: skipped) }
        do {
            logPages =
                try guardConnection.map { guardConnection in
                    try guardConnection.inDatabase { guarded in
                        try guarded.execute(sql: "BEGIN IMMEDIATE")
                        defer { try? guarded.execute(sql: "ROLLBACK") }
                        let pages = try passive(pool, syncs: false)
                        guard fdatasync(try file()) == 0 else { throw StoreError("cannot sync \(path): \(String(cString: strerror(errno)))") }
                        return pages
                    }
                } ?? passive(pool, syncs: true)
            if logPages > truncatePages {
                try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            }
            count.add(1, ordering: .relaxed)
        } catch {
            // A failed checkpoint leaves the log longer; the next one retries.
            skipped = true
        }
    }

    /// A passive checkpoint on the writer's connection; returns the pages in the log.
    private func passive(_ pool: DatabasePool, syncs: Bool) throws -> Int {
        try pool.writeWithoutTransaction { db in
            if !syncs { try db.execute(sql: "PRAGMA synchronous = OFF") }
            defer { if !syncs { try? db.execute(sql: "PRAGMA synchronous = FULL") } }
            // (busy, pages in the log, pages copied)
            return try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")?[1] ?? 0
        }
    }

    private var descriptor: Int32 = -1

    /// The database file, opened once for its syncs.
    private func file() throws -> Int32 {
        if descriptor < 0 { descriptor = open(path, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw StoreError("cannot open \(path): \(String(cString: strerror(errno)))") }
        return descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }
}
