import Dispatch
import Logging
import PostgresNIO
import RelayCore
import Synchronization

/// The relay's store on PostgreSQL, as `clawrelay serve` opens it: the schema migrated, the node's
/// writer and journal, and the synchronous start-up reads and writes the server needs before its
/// loop serves (each on a connection of its own: the writer reports on the loop, which does not
/// run yet).
public final class PostgresStore {
    public let settings: PostgresSettings
    public let node: NodeIncarnation
    public let writer: PostgresWriter
    public let journal: PostgresJournal
    let logger: Logger
    /// The cluster this store's node joined (`joinCluster`), stopped by `close`.
    private let cluster: Mutex<PostgresCluster?> = Mutex(nil)

    /// Connects, migrates the schema (several nodes starting at once migrate it once) and starts
    /// the writer; throws what stops the relay from starting, in words an operator can act on.
    public init(settings: PostgresSettings, node: NodeIncarnation, executor: any LoopExecutor, logger: Logger) throws {
        self.settings = settings
        self.node = node
        self.logger = logger
        let applied = try Self.blocking(settings, node, "migrate", logger) { connection, logger in
            try await PostgresMigrations.migrate(connection, logger: logger)
        }
        if !applied.isEmpty { logger.notice("postgres: schema migrated", metadata: ["versions": "\(applied)"]) }
        writer = PostgresWriter(settings: settings, node: node, executor: executor, logger: logger)
        journal = PostgresJournal(writer: writer, logger: logger) { [logger] what, error in
            logger.error("store write failed", metadata: ["what": "\(what)", "error": "\(error)"])
        }
    }

    /// A single node's start: turns the last stop cut off fail; returns them.
    public func failCutOffTurns(now: Int64) throws -> [MessageRecord] {
        try run("fail cut-off turns") { connection, logger in
            try await connection.transaction(logger) { try await PostgresMessageQueries.failActive(connection, at: now, logger: logger) }
        }
    }

    /// Joins the cluster as this store's node (`[cluster]`): registers its incarnation, taking
    /// the node's lock, and returns the cluster with the earlier incarnation of the same node id
    /// it replaced (a restart), for the caller to declare dead once its hub serves.
    public func joinCluster(heartbeat: Duration, lease: Duration, executor: any LoopExecutor) throws -> (PostgresCluster, replaced: NodeIncarnation?)
    {
        let cluster = PostgresCluster(
            settings: settings,
            writer: writer,
            identity: node,
            heartbeat: heartbeat,
            lease: lease,
            executor: executor,
            logger: logger
        )
        let replaced = try Self.waiting(settings, "register this node") { try await cluster.node.register() }
        self.cluster.withLock { $0 = cluster }
        try holdPendingPairings()
        return (cluster, replaced)
    }

    /// Leaves the cluster (its lock goes with its control connection, so the others find this
    /// node dead at their next sweep), then finishes the writer's queued work and closes it.
    public func close() {
        let (writer, cluster) = (writer, cluster.withLock { $0 })
        Self.wait {
            await cluster?.stop()
            await writer.stop()
        }
    }

    /// Runs `work` on a connection of its own and waits for it (start-up only).
    func run<R: Sendable>(_ what: String, _ work: @escaping @Sendable (PostgresConnection, Logger) async throws -> R) throws -> R {
        try Self.blocking(settings, node, what, logger, work)
    }

    /// Runs `work` on a connection of its own (closed after) and waits on this thread for it.
    private static func blocking<R: Sendable>(
        _ settings: PostgresSettings,
        _ node: NodeIncarnation,
        _ what: String,
        _ logger: Logger,
        _ work: @escaping @Sendable (PostgresConnection, Logger) async throws -> R
    ) throws -> R {
        try waiting(settings, what) {
            let connection = try await PostgresConnection.connect(
                configuration: try settings.configuration(applicationName: "clawrelay:\(node.node):start"),
                id: 0,
                logger: logger
            )
            do {
                let value = try await work(connection, logger)
                try? await connection.close()
                return value
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }

    /// Waits on this thread for `work` (which runs as a task) and throws what it threw as a
    /// `PostgresStoreError` that says what could not be done, on which database.
    static func waiting<R: Sendable>(_ settings: PostgresSettings, _ what: String, _ work: @escaping @Sendable () async throws -> R) throws -> R {
        let result = wait { () -> Result<R, any Error> in
            do {
                return .success(try await work())
            } catch let error as PostgresStoreError {
                return .failure(error)
            } catch {
                let code: PostgresStoreError.Code = PostgresStoreError.isConnectionFailure(error) ? .connectionLost : .rejected
                let message = "cannot \(what) on PostgreSQL (\(settings)): \(PostgresStoreError.summary(of: error))"
                return .failure(PostgresStoreError(code: code, message: message))
            }
        }
        return try result.get()
    }

    /// Waits on this thread for `work`, which runs as a task (start-up and stop only: never on the
    /// loop, whose jobs the work may wait for).
    static func wait<R: Sendable>(_ work: @escaping @Sendable () async -> R) -> R {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<R?>(nil)
        Task {
            let value = await work()
            box.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return box.withLock { $0! }
    }
}
