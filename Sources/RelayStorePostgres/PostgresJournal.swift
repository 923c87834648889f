import Logging
import PostgresNIO
import RelayCore
import Synchronization

/// The core's journal over PostgreSQL (`[store] kind = "postgres"`): every call is one operation
/// of the node's writer, on its one connection, so completions arrive on the loop after commit,
/// in submission order, as with the SQLite store; reads that follow a write see it.
///
/// The protocols are implemented in `PostgresJournal+*.swift`, their SQL in the `*Queries` enums
/// (static async functions over a connection, testable alone).
public final class PostgresJournal {
    let writer: PostgresWriter
    let logger: Logger
    private let onError: @Sendable (String, any Error) -> Void
    /// The cluster node incarnation whose pending pairing requests this journal mirrors; nil for a
    /// relay on its own (`PostgresStore.joinCluster` sets it).
    let pendingHolder: Mutex<NodeIncarnation?> = Mutex(nil)
    /// This node's folder for uploaded files (`<data_dir>/assets`): an upload stored through
    /// another node is written here from PostgreSQL when it is first asked for. Set before serving.
    public var assetsDirectory: String?

    /// `onError` hears about writes nobody waits for (presence, queue upkeep) that failed.
    public init(writer: PostgresWriter, logger: Logger, onError: @escaping @Sendable (String, any Error) -> Void) {
        self.writer = writer
        self.logger = logger
        self.onError = onError
    }

    /// Runs `work` on the writer's connection after everything submitted before it; `completion`
    /// gets its result on the loop.
    func perform<R: Sendable>(
        _ what: String,
        _ work: @escaping @Sendable (PostgresConnection, Logger) async throws -> R,
        completion: @escaping (Result<R, any Error>) -> Void
    ) {
        writer.perform(.reporting(what, on: writer.executor, work, completion: completion))
    }

    /// `perform` in one transaction.
    func performTransaction<R: Sendable>(
        _ what: String,
        _ work: @escaping @Sendable (PostgresConnection, Logger) async throws -> R,
        completion: @escaping (Result<R, any Error>) -> Void
    ) {
        perform(
            what,
            { connection, logger in try await connection.transaction(logger) { try await work(connection, logger) } },
            completion: completion
        )
    }

    /// Tells `onError` about a write nobody waits for that failed.
    func report(_ what: String, _ error: any Error) { onError(what, error) }

    /// A write nobody waits for; a failure is reported to `onError`.
    func background(_ what: String, _ work: @escaping @Sendable (PostgresConnection, Logger) async throws -> Void) {
        let onError = onError
        perform(what, work) { result in
            if case .failure(let error) = result { onError(what, error) }
        }
    }

    public func barrier(_ completion: @escaping () -> Void) {
        perform("wait for earlier writes", { _, _ in }, completion: { _ in completion() })
    }

    /// The PostgreSQL store does not time its batches (yet).
    public var batchTiming: JournalBatchTiming? { nil }
}
