import Foundation
import GRDB
import RelayCore
import Synchronization

/// The one thread that writes the relay database: it takes every queued operation, runs them in
/// one transaction (each in its own savepoint, so one failure fails only its caller), commits,
/// and then hands all results to the loop in a single job.
///
/// - Important: a completion runs only after the commit, so "done" means durable.
final class StoreWorker: Sendable {
    /// Runs in the batch's transaction; returns the report, told whether the batch committed.
    typealias Operation = @Sendable (Database) -> (@Sendable (_ committed: Bool) -> Void)

    private struct State {
        var queue: [Operation] = []
        var stopped = false
    }

    private let pool: DatabasePool
    private let executor: any LoopExecutor
    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let maxBatch = 512
    let stats = StoreStats()

    init(pool: DatabasePool, executor: any LoopExecutor) {
        self.pool = pool
        self.executor = executor
        let thread = Thread { [self] in self.run() }
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

    /// Finishes queued work, then stops the thread.
    func stop() {
        state.withLock { $0.stopped = true }
        wakeup.signal()
        done.wait()
    }

    private func run() {
        while true {
            let (batch, stopped) = state.withLock { state -> ([Operation], Bool) in
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
        }
        done.signal()
    }

    private func execute(_ batch: [Operation]) {
        var reports: [@Sendable (Bool) -> Void] = []
        reports.reserveCapacity(batch.count)
        var committed = true
        let started = DispatchTime.now().uptimeNanoseconds
        defer { stats.record(operations: batch.count, nanoseconds: DispatchTime.now().uptimeNanoseconds - started) }
        do {
            try pool.writeWithoutTransaction { db in
                try db.inTransaction {
                    for operation in batch { reports.append(operation(db)) }
                    return .commit
                }
            }
        } catch {
            committed = false
        }
        let collected = reports
        let outcome = committed
        executor.execute { for report in collected { report(outcome) } }
    }
}

/// Writer counters for `/metrics`.
public final class StoreStats: Sendable {
    private let batchCount = Atomic<Int>(0)
    private let operationCount = Atomic<Int>(0)
    private let busyMicros = Atomic<Int>(0)
    private let lastBatchMicros = Atomic<Int>(0)

    func record(operations: Int, nanoseconds: UInt64) {
        batchCount.add(1, ordering: .relaxed)
        operationCount.add(operations, ordering: .relaxed)
        busyMicros.add(Int(nanoseconds / 1_000), ordering: .relaxed)
        lastBatchMicros.store(Int(nanoseconds / 1_000), ordering: .relaxed)
    }

    public var batches: Int { batchCount.load(ordering: .relaxed) }
    public var operations: Int { operationCount.load(ordering: .relaxed) }
    public var busySeconds: Double { Double(busyMicros.load(ordering: .relaxed)) / 1e6 }
    public var lastBatchSeconds: Double { Double(lastBatchMicros.load(ordering: .relaxed)) / 1e6 }
}
