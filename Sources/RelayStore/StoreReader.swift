import Foundation
import GRDB
import RelayCore
import Synchronization

/// The thread that runs the relay's reads (replays, timelines, summaries, device lookups) on
/// the pool's reader connections, so they never wait behind the writer's commits nor hold it up.
/// Like the writer, it takes every read queued so far and runs them in one read transaction (one
/// snapshot, which holds every write committed before the first of them was asked for), then hands
/// all results to the loop in one job, in the order the reads were asked for.
final class StoreReader: Sendable {
    /// One read: run on the batch's connection, or failed with the error that kept the batch from
    /// getting one; either way it returns the job that reports its result on the loop.
    struct Read: Sendable {
        let run: @Sendable (Database) -> @Sendable () -> Void
        let fail: @Sendable (any Error) -> @Sendable () -> Void
    }

    private struct State {
        var queue: [Read] = []
        var stopped = false
    }

    private let pool: DatabasePool
    private let executor: any LoopExecutor
    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(pool: DatabasePool, executor: any LoopExecutor) {
        self.pool = pool
        self.executor = executor
        let thread = Thread { [self] in
            Thread.nameCurrent("store-reader")
            run()
        }
        thread.name = "store-reader"
        thread.start()
    }

    /// Runs `work` in the next batch's read transaction; `completion` runs on the loop with its result.
    func read<R: Sendable>(_ work: @escaping @Sendable (Database) throws -> R, completion: @escaping (Result<R, any Error>) -> Void) {
        let bound = LoopBound(completion, loop: executor)
        let read = Read(
            run: { db in
                let result = Result { try work(db) }
                return { bound.value(result) }
            },
            fail: { error in { bound.value(.failure(error)) } }
        )
        let first = state.withLock { state -> Bool in
            state.queue.append(read)
            return state.queue.count == 1
        }
        if first { wakeup.signal() }
    }

    /// Finishes the reads asked for, then stops the thread.
    func stop() {
        state.withLock { $0.stopped = true }
        wakeup.signal()
        done.wait()
    }

    private func run() {
        while true {
            let (reads, stopped) = state.withLock { state -> ([Read], Bool) in
                defer { state.queue.removeAll(keepingCapacity: true) }
                return (state.queue, state.stopped)
            }
            if reads.isEmpty {
                if stopped { break }
                wakeup.wait()
                continue
            }
            let reports: [@Sendable () -> Void]
            do {
                reports = try pool.read { db in reads.map { $0.run(db) } }
            } catch {
                reports = reads.map { $0.fail(error) }
            }
            executor.execute { for report in reports { report() } }
        }
        done.signal()
    }
}
