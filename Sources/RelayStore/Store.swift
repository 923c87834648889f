import Foundation
import GRDB
import RelayCore

/// A transaction handed to store work; queries take it as their first argument.
public typealias StoreTransaction = Database

/// The relay's durable state in SQLite (WAL) under the data directory.
///
/// The relay reaches it through `perform`, whose work runs on the writer thread and whose
/// completion runs on the loop after commit. The CLI uses `read`/`write` directly; SQLite's
/// locking keeps both processes consistent.
public final class Store: Sendable {
    public let path: String
    let pool: DatabasePool
    private let worker: StoreWorker?
    private let reader: StoreReader?
    private let checkpointer: CheckpointerSlot?
    private let executor: (any LoopExecutor)?

    /// Opens the store for the relay: completions are delivered on `executor`, and the relay's
    /// own thread checkpoints the log. Without an executor (the CLI) SQLite checkpoints as usual.
    public init(dataDirectory: String, executor: (any LoopExecutor)?) throws {
        let path = (dataDirectory as NSString).appendingPathComponent("relay.sqlite")
        self.path = path
        let fullSync = ProcessInfo.processInfo.environment["CLAWRELAY_SYNC_NORMAL"] == nil
        let pool = try DatabaseOpener.open(
            path: path,
            migrator: Migrations.relay(),
            fullSync: fullSync,
            ownCheckpoints: executor != nil,
            writerCacheKiB: DatabaseOpener.storeWriterCacheKiB
        )
        self.pool = pool
        self.executor = executor
        let checkpointer = try executor.map { _ in CheckpointerSlot(try Checkpointer(path: path, fullSync: fullSync)) }
        self.checkpointer = checkpointer
        worker = executor.flatMap { executor in checkpointer.map { StoreWorker(pool: pool, executor: executor, checkpointer: $0) } }
        reader = executor.map { StoreReader(pool: pool, executor: $0) }
    }

    /// Runs `work` in the writer's next batch; `completion` runs on the loop once committed.
    public func perform<R: Sendable>(
        _ work: @escaping @Sendable (Database) throws -> R,
        completion: @escaping (Result<R, any Error>) -> Void
    ) {
        perform(writing: { db, _ in try work(db) }, completion: completion)
    }

    /// `perform` for the hot path: `work` also gets the writer's raw statements.
    func perform<R: Sendable>(
        writing work: @escaping @Sendable (Database, WriterStatements) throws -> R,
        completion: @escaping (Result<R, any Error>) -> Void
    ) {
        guard let worker, let executor else { preconditionFailure("Store opened without an executor") }
        let bound = LoopBound(completion, loop: executor)
        worker.submit { db, statements, isolated in
            var result: Result<R, any Error>
            do {
                if isolated {
                    // A savepoint of its own: a failing operation rolls back only its own writes.
                    try db.run("SAVEPOINT op")
                    do {
                        let value = try work(db, statements)
                        try db.run("RELEASE op")
                        result = .success(value)
                    } catch {
                        try? db.run("ROLLBACK TO op")
                        try? db.run("RELEASE op")
                        throw error
                    }
                } else {
                    result = .success(try work(db, statements))
                }
            } catch {
                result = .failure(error)
            }
            let outcome = result
            let failed: Bool
            if case .failure = outcome { failed = true } else { failed = false }
            return ({ committed in bound.value(committed ? outcome : .failure(StoreError("the database did not commit"))) }, failed)
        }
    }

    /// Runs `work` on a reader connection (not behind the writer); `completion` runs on the loop.
    /// It sees every write whose completion ran before it was asked.
    public func read<R: Sendable>(
        _ work: @escaping @Sendable (Database) throws -> R,
        completion: @escaping (Result<R, any Error>) -> Void
    ) {
        guard let reader else { preconditionFailure("Store opened without an executor") }
        reader.read(work, completion: completion)
    }

    /// While a completion of `perform` runs (loop thread): when the writer took its batch and when
    /// the batch committed.
    public var batchTiming: JournalBatchTiming? { worker?.timing.current }

    /// Queues what `submit` performs as one batch of the writer (see `StoreWorker.gather`).
    func gather(_ submit: () -> Void) {
        guard let worker else { preconditionFailure("Store opened without an executor") }
        worker.gather(submit)
    }

    /// Writer counters; zero when opened without an executor.
    public var stats: StoreStats { worker?.stats ?? StoreStats() }

    /// Synchronous read, for the CLI and start-up.
    public func read<R>(_ work: (Database) throws -> R) throws -> R { try pool.read(work) }

    /// Synchronous write transaction, for the CLI and start-up.
    public func write<R>(_ work: (Database) throws -> R) throws -> R { try pool.write(work) }

    /// Waits for queued work to commit and stops the writer (which checkpoints a last time).
    public func close() {
        reader?.stop()
        worker?.stop()
    }

    /// Checkpoints the relay's writer has run (0 in the CLI).
    public var checkpoints: Int { checkpointer?.checkpoints ?? 0 }
}
