import Foundation
import GRDB
import GRDBSQLite
import RelayCore
import Synchronization

/// The one thread that writes the relay database: it takes every queued operation, runs them in
/// one transaction (each in its own savepoint, so one failure fails only its caller), commits,
/// and then hands all results to the loop in a single job.
///
/// - Important: a completion runs only after the commit, so "done" means durable.
final class StoreWorker: Sendable {
    /// Runs in the batch's transaction (in a savepoint of its own when `isolated`); returns the
    /// report, told whether the batch committed, and whether the operation failed.
    typealias Operation =
        @Sendable (_ db: Database, _ statements: WriterStatements, _ isolated: Bool) -> (
            report: @Sendable (_ committed: Bool) -> Void, failed: Bool
        )

    private struct State {
        var queue: [Operation] = []
        var stopped = false
        /// While above zero, the writer leaves the queue alone (`gather`).
        var gathering = 0
    }

    private let pool: DatabasePool
    private let checkpointer: CheckpointerSlot
    private let executor: any LoopExecutor
    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let maxBatch = 512
    let stats = StoreStats()
    private let statements = WriterStatementsSlot()
    /// The timing of the batch whose reports run now, for `Store.batchTiming`.
    let timing = BatchTimingSlot()

    init(pool: DatabasePool, executor: any LoopExecutor, checkpointer: CheckpointerSlot) {
        self.pool = pool
        self.executor = executor
        self.checkpointer = checkpointer
        let thread = Thread { [self] in
            Thread.nameCurrent("store-writer")
            self.run()
        }
        thread.name = "store-writer"
        thread.start()
    }

    /// Queues `operation`; it returns the job that reports its result, which runs on the loop.
    func submit(_ operation: @escaping Operation) {
        let first = state.withLock { state -> Bool in
            state.queue.append(operation)
            return state.queue.count == 1
        }
        if first { wakeup.signal() }
    }

    /// Runs `submit`, which queues operations, and lets the writer take none of them before it
    /// returns: they go into one transaction when the writer is idle (a batch of a known shape,
    /// for `StoreBench`).
    func gather(_ submit: () -> Void) {
        state.withLock { $0.gathering += 1 }
        submit()
        let ready = state.withLock { state -> Bool in
            state.gathering -= 1
            return state.gathering == 0 && !state.queue.isEmpty
        }
        if ready { wakeup.signal() }
    }

    /// Finishes queued work, then stops the thread.
    func stop() {
        state.withLock { $0.stopped = true }
        wakeup.signal()
        done.wait()
    }

    private func run() {
        while true {
            let (batch, stopped) = state.withLock { state -> ([Operation], Bool) in
                guard state.gathering == 0 else { return ([], false) }
                let count = min(state.queue.count, maxBatch)
                let batch = Array(state.queue.prefix(count))
                state.queue.removeFirst(count)
                return (batch, state.stopped)
            }
            if batch.isEmpty {
                if stopped { break }
                wakeup.wait()
                continue
            }
            execute(batch)
            checkpointer.value.afterBatch(pool, stats: stats)
        }
        checkpointer.value.afterBatch(pool, stats: stats, force: true)
        // Finalized on the writer's connection, before the pool can close it.
        pool.writeWithoutTransaction { db in
            statements.release()
            StoreStats.stopCounting(db)  // the hook points at this worker's stats
        }
        done.signal()
    }

    /// Runs the batch without per-operation savepoints, the common case. If any operation fails,
    /// the whole transaction rolls back and the batch runs again with a savepoint per operation,
    /// so one failure still fails only its own caller.
    private func execute(_ batch: [Operation]) {
        let started = DispatchTime.now().uptimeNanoseconds
        let cpuStarted = StoreStats.threadCPUNanos()
        let takenAt = MonotonicClock.nanos()
        let reports = run(batch, isolated: false) ?? run(batch, isolated: true)
        // Counted before the reports go out, so whoever hears of a commit sees it counted.
        stats.record(
            operations: batch.count,
            nanoseconds: DispatchTime.now().uptimeNanoseconds - started,
            cpuNanoseconds: StoreStats.threadCPUNanos() - cpuStarted
        )
        deliver(reports ?? batch.map { _ in { @Sendable (_: Bool) in } }, committed: reports != nil, takenAt: takenAt)
    }

    private struct Retry: Error {}

    /// The reports of a committed batch; nil when it rolled back (a failure in fast mode, or the commit).
    private func run(_ batch: [Operation], isolated: Bool) -> [@Sendable (Bool) -> Void]? {
        var reports: [@Sendable (Bool) -> Void] = []
        reports.reserveCapacity(batch.count)
        do {
            try pool.writeWithoutTransaction { db in
                let statements = statements.statements(for: db) { [stats] db in stats.countWALPages(of: db) }
                try db.inTransaction {
                    for operation in batch {
                        let (report, failed) = operation(db, statements, isolated)
                        if failed && !isolated { throw Retry() }
                        reports.append(report)
                    }
                    return .commit
                }
            }
            return reports
        } catch {
            return nil
        }
    }

    private func deliver(_ reports: [@Sendable (Bool) -> Void], committed: Bool, takenAt: UInt64) {
        let collected = reports
        let batch = JournalBatchTiming(takenAt: takenAt, committedAt: MonotonicClock.nanos())
        let timing = timing
        executor.execute {
            timing.current = batch
            for report in collected { report(committed) }
            timing.current = nil
        }
    }
}

/// The writer's checkpointer. `@unchecked Sendable` holds because only the writer thread runs it
/// (others read its `checkpoints`, an atomic).
final class CheckpointerSlot: @unchecked Sendable {
    let value: Checkpointer

    init(_ value: Checkpointer) { self.value = value }

    var checkpoints: Int { value.checkpoints }
}

/// The writer's hot statements, made on its connection at the first batch.
/// `@unchecked Sendable` holds because only the writer thread touches `value`, inside its access to the connection.
final class WriterStatementsSlot: @unchecked Sendable {
    private var value: WriterStatements?

    /// The statements of `db`, made (and `fresh` called) the first time the writer uses it.
    func statements(for db: Database, fresh: (Database) -> Void) -> WriterStatements {
        if let value, value.connection == db.sqliteConnection { return value }
        fresh(db)
        let made = WriterStatements(db, keepsClocks: true)
        value = made
        return made
    }

    func release() { value = nil }
}

/// The writer's timing of the batch whose reports are running on the loop, nil between batches.
/// `@unchecked Sendable` holds because `current` is written and read only on the loop thread
/// (by the job that runs a batch's reports and by the completions it runs).
final class BatchTimingSlot: @unchecked Sendable {
    var current: JournalBatchTiming?
}

/// Writer counters for `/metrics`.
public final class StoreStats: Sendable {
    private let batchCount = Atomic<Int>(0)
    private let operationCount = Atomic<Int>(0)
    private let busyMicros = Atomic<Int>(0)
    private let lastBatchMicros = Atomic<Int>(0)
    private let walPageCount = Atomic<Int>(0)
    /// Frames in the log after the writer's last commit (written only by the writer's WAL hook).
    private let walFrames = Atomic<Int>(0)

    private let cpuMicros = Atomic<Int>(0)
    private let checkpointMicros = Atomic<Int>(0)
    private let checkpointMaxMicros = Atomic<Int>(0)
    private let checkpointsSkipped = Atomic<Int>(0)
    private let logPagesMax = Atomic<Int>(0)

    func record(operations: Int, nanoseconds: UInt64, cpuNanoseconds: UInt64 = 0) {
        batchCount.add(1, ordering: .relaxed)
        operationCount.add(operations, ordering: .relaxed)
        busyMicros.add(Int(nanoseconds / 1_000), ordering: .relaxed)
        cpuMicros.add(Int(cpuNanoseconds / 1_000), ordering: .relaxed)
        lastBatchMicros.store(Int(nanoseconds / 1_000), ordering: .relaxed)
    }

    /// A checkpoint took `nanoseconds` and found `logPages` pages in the log; `skipped` when it
    /// could not run (another process held the write lock, or SQLite failed).
    func recordCheckpoint(nanoseconds: UInt64, logPages: Int, skipped: Bool) {
        let micros = Int(nanoseconds / 1_000)
        checkpointMicros.add(micros, ordering: .relaxed)
        checkpointMaxMicros.max(micros, ordering: .relaxed)
        logPagesMax.max(logPages, ordering: .relaxed)
        if skipped { checkpointsSkipped.add(1, ordering: .relaxed) }
    }

    /// Time the writer spent checkpointing between its batches (its commits wait meanwhile).
    public var checkpointSeconds: Double { Double(checkpointMicros.load(ordering: .relaxed)) / 1e6 }
    /// The longest checkpoint since the relay started.
    public var checkpointMaxSeconds: Double { Double(checkpointMaxMicros.load(ordering: .relaxed)) / 1e6 }
    /// Checkpoints skipped because another process was writing, or failed.
    public var checkpointsSkippedCount: Int { checkpointsSkipped.load(ordering: .relaxed) }
    /// The most pages the log held at a checkpoint since the relay started.
    public var logPagesMaxCount: Int { logPagesMax.load(ordering: .relaxed) }

    /// The calling thread's CPU time (user and system), in nanoseconds.
    static func threadCPUNanos() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The writer thread's CPU time in its transactions (what `busySeconds` holds beyond waiting
    /// for the disk or for a CPU).
    public var cpuSeconds: Double { Double(cpuMicros.load(ordering: .relaxed)) / 1e6 }

    public var batches: Int { batchCount.load(ordering: .relaxed) }
    public var operations: Int { operationCount.load(ordering: .relaxed) }
    public var busySeconds: Double { Double(busyMicros.load(ordering: .relaxed)) / 1e6 }
    public var lastBatchSeconds: Double { Double(lastBatchMicros.load(ordering: .relaxed)) / 1e6 }
    /// Pages the writer's commits appended to the write-ahead log (what each commit writes and
    /// syncs): a commit that grew the log by n frames counts n; one that started it over counts
    /// all it holds. (A checkpoint that restarts the log between two commits can hide a few.)
    public var walPages: Int { walPageCount.load(ordering: .relaxed) }

    /// Counts the pages of every commit on `db` from now on. The store runs its own checkpoints
    /// (`wal_autocheckpoint = 0`), so the connection's WAL hook is free.
    func countWALPages(of db: Database) {
        sqlite3_wal_hook(db.sqliteConnection, StoreStats.walCommitted, Unmanaged.passUnretained(self).toOpaque())
    }

    static func stopCounting(_ db: Database) { sqlite3_wal_hook(db.sqliteConnection, nil, nil) }

    /// SQLite's WAL hook: a commit left `frames` frames in the log.
    private static let walCommitted: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, CInt) -> CInt = {
        context,
        _,
        _,
        frames in
        guard let context else { return SQLITE_OK }
        Unmanaged<StoreStats>.fromOpaque(context).takeUnretainedValue().committed(frames: Int(frames))
        return SQLITE_OK
    }

    private func committed(frames: Int) {
        let before = walFrames.exchange(frames, ordering: .relaxed)
        walPageCount.add(frames >= before ? frames - before : frames, ordering: .relaxed)
    }
}
