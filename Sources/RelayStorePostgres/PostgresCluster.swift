import Logging
import RelayCore
import Synchronization

/// A node's part in a cluster on PostgreSQL (`[cluster]`): its membership (`PostgresNode`), the
/// fabric, the log reads and the turn ledger, handed to the core as one `ClusterLink`, and the
/// task that keeps the membership: a heartbeat every `heartbeat`, a sweep for dead nodes after it.
///
/// - Important: a node that finds itself declared dead (fenced) must stop serving: `fenced` is
///   told once and the membership task ends. A node that loses its control connection reconnects
///   and carries on as the same incarnation only if nobody declared it dead meanwhile; after
///   reconnecting it leaves the sweep alone for one lease, so nodes cut off by the same
///   PostgreSQL restart have time to come back before their missing locks count as deaths.
public final class PostgresCluster: Sendable {
    public let node: PostgresNode
    public let fabric: PostgresFabric
    public let journal: PostgresClusterJournal
    public let ledger: PostgresTurnLedger
    private let heartbeat: Duration
    private let lease: Duration
    private let logger: Logger
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    public init(
        settings: PostgresSettings,
        writer: PostgresWriter,
        identity: NodeIncarnation,
        heartbeat: Duration,
        lease: Duration,
        executor: any LoopExecutor,
        logger: Logger
    ) {
        node = PostgresNode(settings: settings, identity: identity, lease: lease, logger: logger)
        fabric = PostgresFabric(settings: settings, node: identity.node, executor: executor, own: writer.ownBackends, logger: logger)
        journal = PostgresClusterJournal(settings: settings, nodeID: identity.node, executor: executor, writer: writer, logger: logger)
        ledger = PostgresTurnLedger(writer: writer, logger: logger)
        self.heartbeat = heartbeat
        self.lease = lease
        self.logger = logger
    }

    /// What the core needs to take part (`RelayHub(cluster:)`).
    public var link: ClusterLink { ClusterLink(node: node.identity, fabric: fabric, journal: journal, ledger: ledger) }

    /// Starts hearing the other nodes and keeping the membership. `dead` hears every dead
    /// incarnation other than this one, as often as a sweep names it (declaring one dead twice
    /// changes nothing); `fenced` hears, once, why this node must stop.
    public func start(dead: @escaping @Sendable (NodeIncarnation) -> Void, fenced: @escaping @Sendable (String) -> Void) {
        fabric.start()
        task.withLock { task in
            guard task == nil else { return }
            task = Task { [self] in await keep(dead: dead, fenced: fenced) }
        }
    }

    /// Stops the membership task and closes the connections; the node's lock goes with its
    /// control connection, so the others find it dead at their next sweep.
    public func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
        await fabric.stop()
        await journal.close()
        await node.close()
    }

    private func keep(dead: @Sendable (NodeIncarnation) -> Void, fenced: @Sendable (String) -> Void) async {
        let clock = ContinuousClock()
        // The first sweep runs at once: only a reconnect waits a lease before sweeping.
        var connectedAt = clock.now - lease
        var cutOff = false
        while !Task.isCancelled {
            do {
                if cutOff {
                    guard try await node.resume() else {
                        return fenced("another node declared this one dead while PostgreSQL was out of reach")
                    }
                    cutOff = false
                    connectedAt = clock.now
                }
                guard try await node.heartbeat() else { return fenced("another node declared this one dead (its lease lapsed)") }
                if clock.now - connectedAt >= lease {
                    for incarnation in try await node.sweep() where incarnation != node.identity { dead(incarnation) }
                }
            } catch {
                if !cutOff {
                    logger.warning(
                        "cluster: lost the control connection to PostgreSQL; reconnecting",
                        metadata: ["node": "\(node.identity)", "error": "\(PostgresStoreError.summary(of: error))"]
                    )
                }
                cutOff = true
            }
            try? await Task.sleep(for: heartbeat)
        }
    }
}
