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
    /// The upstream accounts this node is configured with (`hold(accounts:)`).
    private let accounts: Mutex<[String]> = Mutex([])
    /// Shares the held accounts' credential files (`shareAccountFiles(in:)`); nil: not shared.
    private let accountFiles: Mutex<AccountFileSync?> = Mutex(nil)

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
    /// Devices that authenticate by bearer token are read again at each heartbeat's pace.
    public var link: ClusterLink {
        let (seconds, attoseconds) = heartbeat.components
        let heartbeatMillis = Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
        return ClusterLink(node: node.identity, fabric: fabric, journal: journal, ledger: ledger, deviceRefreshMillis: max(250, heartbeatMillis))
    }

    /// What the membership task reports.
    public struct Reports: Sendable {
        /// Every dead incarnation other than this one, as often as a sweep names it (declaring one
        /// dead twice changes nothing).
        public var dead: @Sendable (NodeIncarnation) -> Void
        /// Once: why this node must stop.
        public var fenced: @Sendable (String) -> Void
        /// After each heartbeat: who holds each of the node's upstream accounts.
        public var leases: @Sendable ([AccountLease]) -> Void

        public init(
            dead: @escaping @Sendable (NodeIncarnation) -> Void,
            fenced: @escaping @Sendable (String) -> Void,
            leases: @escaping @Sendable ([AccountLease]) -> Void = { _ in }
        ) {
            self.dead = dead
            self.fenced = fenced
            self.leases = leases
        }
    }

    /// Starts hearing the other nodes and keeping the membership, holding the accounts of
    /// `hold(accounts:)` that no live node holds.
    public func start(reports: Reports) {
        fabric.start()
        task.withLock { task in
            guard task == nil else { return }
            task = Task { [self] in await keep(reports) }
        }
    }

    /// The upstream accounts this node is configured with (at start, and after a reload): from
    /// the next heartbeat on it holds those no live node holds, lets go of those it holds and is
    /// no longer configured with, and reports who holds each.
    public func hold(accounts names: [String]) { accounts.withLock { $0 = names } }

    /// From the next heartbeat on, the credential files of the accounts this node holds travel
    /// with their leases (`AccountFileSync`, `directory` is the node's accounts folder): a node
    /// that takes an account writes the stored ones there before it reports the lease.
    public func shareAccountFiles(in directory: String) {
        accountFiles.withLock { $0 = AccountFileSync(directory: directory, node: node, logger: logger) }
    }

    /// A held account's link reported itself connected (it may have just paired): its files are
    /// checked and stored now, not at the next heartbeat.
    public func accountLinkConnected(_ account: String) { accountFiles.withLock { $0 }?.linkConnected(account) }

    /// Whether the held account's shared files are in place here (true when files are not shared).
    public func accountFilesTaken(_ account: String) -> Bool { accountFiles.withLock { $0 }?.hasTaken(account) ?? true }

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

    private func keep(_ reports: Reports) async {
        let clock = ContinuousClock()
        // The first sweep runs at once: only a reconnect waits a lease before sweeping.
        var connectedAt = clock.now - lease
        var cutOff = false
        // Whether the last heartbeat held accounts: a reload that drops them all still lets them go once.
        var holding = false
        while !Task.isCancelled {
            do {
                if cutOff {
                    guard try await node.resume() else {
                        return reports.fenced("another node declared this one dead while PostgreSQL was out of reach")
                    }
                    cutOff = false
                    connectedAt = clock.now
                }
                guard try await node.heartbeat() else { return reports.fenced("another node declared this one dead (its lease lapsed)") }
                // Like the sweep, taking a dead holder's accounts waits a lease after a reconnect.
                let settled = clock.now - connectedAt >= lease
                if settled {
                    for incarnation in try await node.sweep() where incarnation != node.identity { reports.dead(incarnation) }
                }
                // Accounts no longer configured here (a reload dropped them) are let go.
                let accounts = accounts.withLock { $0 }
                if !accounts.isEmpty || holding {
                    let leases = try await node.holdAccounts(accounts, take: settled)
                    holding = !accounts.isEmpty
                    await accountFiles.withLock { $0 }?.sync(leases)
                    if holding { reports.leases(leases) }
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
