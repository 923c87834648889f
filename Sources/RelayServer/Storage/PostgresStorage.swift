import Foundation
import Logging
import RelayCore
import RelayStore
import RelayStorePostgres

/// `[store] kind = "postgres"`: the relay's store in a PostgreSQL database, on its own or as one
/// node of a cluster (`[cluster]`, docs/cluster.md).
final class PostgresStorage: RelayStorage {
    let store: PostgresStore
    /// This node's part in the cluster; nil for a relay on its own.
    private let membership: PostgresCluster?
    /// The earlier incarnation of this node id (the last run of this node), declared dead once the hub serves.
    private let replaced: NodeIncarnation?
    private let logger: Logger
    /// Wakes the operator desk at each queued command (`watchOperatorCommands`).
    private var operatorWatch: PostgresChannelWatch?

    init(_ settings: StoreSettings, cluster: ClusterSettings?, dataDirectory: String, loop: any LoopExecutor, logger: Logger) throws {
        let postgres = try Self.settings(settings)
        let node = NodeIncarnation(node: cluster?.nodeID ?? Self.defaultNodeID(dataDirectory: dataDirectory))
        logger.info("store: PostgreSQL", metadata: ["database": "\(postgres)", "node": "\(node)"])
        store = try PostgresStore(settings: postgres, node: node, executor: loop, logger: logger)
        store.journal.assetsDirectory = (dataDirectory as NSString).appendingPathComponent("assets")
        self.logger = logger
        if let cluster {
            (membership, replaced) = try store.joinCluster(
                heartbeat: .seconds(cluster.heartbeatSeconds),
                lease: .seconds(cluster.leaseSeconds),
                executor: loop
            )
            try store.recordDataDirectory((dataDirectory as NSString).standardizingPath)
            membership?.shareAccountFiles(in: (dataDirectory as NSString).appendingPathComponent("accounts"))
            logger.notice("cluster: joined", metadata: ["node": "\(node)", "replaces": "\(replaced.map { "\($0)" } ?? "none")"])
        } else {
            (membership, replaced) = (nil, nil)
        }
    }

    /// The connection settings `[store]` gives (the password from its file, the URL or `PGPASSWORD`).
    static func settings(_ settings: StoreSettings) throws -> PostgresSettings {
        try PostgresSettings(
            url: settings.url ?? "",
            passwordFile: settings.passwordFile,
            environmentPassword: ProcessInfo.processInfo.environment["PGPASSWORD"],
            poolSize: settings.poolSize
        )
    }

    /// `[cluster] node_id`'s default: this host's name and the data directory.
    static func defaultNodeID(dataDirectory: String) -> String {
        ProcessInfo.processInfo.hostName + ":" + (dataDirectory as NSString).standardizingPath
    }

    var journal: any RelayJournal { store.journal }
    var stats: StoreStats? { nil }

    var cluster: ClusterLink? { membership?.link }

    /// A relay on its own settles what its last stop left. A cluster node touches no other node's
    /// rows: its own last run's turns end when that incarnation is declared dead (`joinCluster`).
    func prepareForStart(now: Int64) throws -> [MessageRecord] {
        membership == nil ? try store.prepareForStart(now: now) : []
    }

    func joinCluster(
        hub: RelayHub,
        loop: any LoopExecutor,
        leases: @escaping ([AccountLease]) -> Void,
        fenced: @escaping @Sendable (String) -> Void
    ) {
        guard let membership else { return }
        let hub = LoopBound(hub, loop: loop)
        let held = LoopBound(leases, loop: loop)
        let dead: @Sendable (NodeIncarnation) -> Void = { incarnation in hub.loop.execute { hub.value.declareDead(incarnation) } }
        membership.start(
            reports: PostgresCluster.Reports(
                dead: dead,
                fenced: fenced,
                leases: { answer in held.loop.execute { held.value(answer) } }
            )
        )
        if let replaced { dead(replaced) }
    }

    func holdAccounts(_ accounts: [String]) { membership?.hold(accounts: accounts) }
    func accountFilesReady(_ account: String) -> Bool { membership?.accountFilesTaken(account) ?? true }
    func accountLinkConnected(_ account: String) { membership?.accountLinkConnected(account) }
    func storedDevices() throws -> [DeviceRecord] { try store.storedDevices() }
    func gatewayFingerprint() throws -> String { try store.gatewayFingerprint() }
    /// Shared by every node in the database. A relay that ran on its own before proposes the key in
    /// its data directory, so the tokens it signed keep working; a node whose file holds another
    /// key says so (the tokens signed with it no longer verify).
    func clawlineSigningKey(dataDirectory: String) throws -> [UInt8] {
        let local = SigningKey.stored(in: dataDirectory)
        let key = Array(try sharedKey("clawline_signing_key", "the Clawline signing key", local: local.map { Data($0) }) { $0.count >= 32 })
        if let local, local != key {
            logger.warning("the jwt.key in this data directory differs from the cluster's; Clawline tokens signed with it no longer verify")
        }
        return key
    }

    /// The first node proposes its data directory's key (or a new one); a node whose file holds
    /// another gets the cluster's written over it, and says so (operators that paired with the
    /// replaced identity see a new gateway device).
    func shareGatewayIdentity(dataDirectory: String) throws {
        let path = (dataDirectory as NSString).appendingPathComponent("gateway.key")
        let local = FileManager.default.contents(atPath: path).flatMap { $0.count == 32 ? $0 : nil }
        let key = try sharedKey("gateway_identity_key", "the gateway identity key", local: local) { $0.count == 32 }
        guard local != key else { return }
        if local != nil { logger.warning("the gateway.key in this data directory differs from the cluster's; the cluster's replaces it") }
        guard FileManager.default.createFile(atPath: path, contents: key, attributes: [.posixPermissions: 0o600]) else {
            throw StoreError("cannot write the gateway identity \(path)")
        }
    }

    /// The key `name` in the database's `meta`, base64: the first node to ask stores `local` (or
    /// 32 new random bytes), and every node gets what is stored; refused unless `valid`.
    private func sharedKey(_ name: String, _ what: String, local: Data?, valid: (Data) -> Bool) throws -> Data {
        let proposed = (local ?? Data(SigningKey.random())).base64EncodedString()
        let shared = try store.sharedValue(name, proposed: proposed)
        guard let key = Data(base64Encoded: shared), valid(key) else {
            throw StoreError("\(what) stored in PostgreSQL is not 32 bytes of base64")
        }
        return key
    }

    func lastOperatorCommand() throws -> Int64 { try store.lastOperatorCommand() }

    /// The safety poll: a NOTIFY wakes the desk at each command.
    var operatorPollMillis: Int { 2000 }

    func watchOperatorCommands(wake: @escaping @Sendable () -> Void) {
        operatorWatch = store.watchOperatorCommands(wake: wake)
    }

    func operatorCommands(after id: Int64, completion: @escaping (Result<[OperatorCommand], any Error>) -> Void) {
        store.operatorCommands(after: id, completion: completion)
    }

    func completeOperatorCommand(id: Int64, result: String, at millis: Int64) {
        store.completeOperatorCommand(id: id, result: result, at: millis)
    }

    /// Stops hearing operator commands, leaves the cluster (if any) and closes the store.
    func close() {
        operatorWatch?.stop()
        store.close()
    }
}
