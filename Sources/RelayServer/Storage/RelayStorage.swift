import RelayCore
import RelayStore

/// What the relay keeps durably, whichever database holds it (`[store]`): the core's journal, and
/// what the server itself reads at start and while it runs. The audit is not here: it stays in
/// each node's own SQLite file.
///
/// - Important: the synchronous calls are for start-up (before the loop serves); the others
///   complete on the loop, like the journal's.
protocol RelayStorage: AnyObject {
    var journal: any RelayJournal { get }
    /// The SQLite writer's counters for `/metrics`; nil for a store that does not keep them.
    var stats: StoreStats? { get }

    /// Settles what the last stop left: every device offline, turns cut off failed (returned, for
    /// the bridges to tell their devices), operator commands nobody ran dropped, upstream account
    /// rows cleared (the accounts report again as they connect).
    func prepareForStart(now: Int64) throws -> [MessageRecord]
    /// Every stored device, for the core to start with (bearer tokens work from the first request).
    func storedDevices() throws -> [DeviceRecord]
    /// This install's gateway fingerprint (mDNS, pairing links), made on first use.
    func gatewayFingerprint() throws -> String

    /// The Clawline token signing key (made on first use).
    func clawlineSigningKey(dataDirectory: String) throws -> [UInt8]
    /// Makes the data directory's `gateway.key` (the relay's own OpenClaw gateway device
    /// identity) the one every node of the database presents: on PostgreSQL the first node's is
    /// shared and written into every other node's data directory. Nothing for a relay on SQLite.
    func shareGatewayIdentity(dataDirectory: String) throws

    /// The newest operator command's id (commands before start are not run).
    func lastOperatorCommand() throws -> Int64
    /// How often the operator desk looks for commands (a safety net where the store wakes it).
    var operatorPollMillis: Int { get }
    /// Calls `wake` (on any thread) when a command may have been queued; nothing for a store that
    /// cannot tell.
    func watchOperatorCommands(wake: @escaping @Sendable () -> Void)
    /// Open commands `clawrelay devices …` queued after `id` that this node must run, oldest first.
    func operatorCommands(after id: Int64, completion: @escaping (Result<[OperatorCommand], any Error>) -> Void)
    /// Records this node's outcome of a command for the CLI that waits for it.
    func completeOperatorCommand(id: Int64, result: String, at millis: Int64)

    /// The cluster this node takes part in (`[cluster]`); nil for a relay on its own.
    var cluster: ClusterLink? { get }
    /// Starts taking part in the cluster once `hub` serves: hearing the other nodes, heartbeats,
    /// declaring dead nodes dead on `hub`, and holding upstream accounts (`holdAccounts`):
    /// `leases` hears on the loop, after each heartbeat, who holds each. `fenced` hears why this
    /// node must stop (the others declared it dead). Nothing for a relay on its own.
    func joinCluster(
        hub: RelayHub,
        loop: any LoopExecutor,
        leases: @escaping ([AccountLease]) -> Void,
        fenced: @escaping @Sendable (String) -> Void
    )
    /// The upstream accounts this cluster node is configured with, which it holds when no live
    /// node does (each is held by one node at a time). Nothing for a relay on its own.
    func holdAccounts(_ accounts: [String])
    /// Whether the credential files of an account this node holds are the cluster's (taken, or
    /// first stored, since it holds it); its link opens only then. True for a relay on its own.
    func accountFilesReady(_ account: String) -> Bool
    /// An account's link reported itself connected (it may have just paired): a cluster node
    /// stores the account's changed files now. Nothing for a relay on its own.
    func accountLinkConnected(_ account: String)

    /// Commits what it holds and closes.
    func close()
}
