import Logging
import RelayCore
import RelayStore

/// The embedded default: `relay.sqlite` in the data directory, through the store's one writer.
final class SQLiteStorage: RelayStorage {
    let store: Store
    let journal: any RelayJournal

    init(dataDirectory: String, loop: any LoopExecutor, logger: Logger) throws {
        let store = try Store(dataDirectory: dataDirectory, executor: loop)
        self.store = store
        journal = StoreJournal(store: store) { [logger] what, error in
            logger.error("store write failed", metadata: ["what": "\(what)", "error": "\(error)"])
        }
    }

    var stats: StoreStats? { store.stats }
    /// SQLite serves one relay on its own.
    var cluster: ClusterLink? { nil }

    func clawlineSigningKey(dataDirectory: String) throws -> [UInt8] { try SigningKey.loadOrCreate(in: dataDirectory) }
    func shareGatewayIdentity(dataDirectory _: String) throws {}

    func joinCluster(
        hub _: RelayHub,
        loop _: any LoopExecutor,
        leases _: @escaping ([AccountLease]) -> Void,
        fenced _: @escaping @Sendable (String) -> Void
    ) {}
    func holdAccounts(_: [String]) {}
    func accountFilesReady(_: String) -> Bool { true }
    func accountLinkConnected(_: String) {}

    func prepareForStart(now: Int64) throws -> [MessageRecord] {
        let failed = try store.write { db in
            try DeviceQueries.resetPresence(db)
            return try MessageQueries.failActive(db, at: now)
        }
        try store.write { db in
            try OperatorQueries.clearPending(db)
            try AccountQueries.clear(db)
        }
        return failed
    }

    func storedDevices() throws -> [DeviceRecord] { try store.read { try DeviceQueries.all($0) } }

    func gatewayFingerprint() throws -> String { try store.write { try PairingLinkQueries.fingerprint($0) } }

    func lastOperatorCommand() throws -> Int64 { try store.read { try OperatorQueries.lastID($0) } }
    /// One relay per file: the desk polls, as the CLI's command is for it.
    var operatorPollMillis: Int { 250 }
    func watchOperatorCommands(wake: @escaping @Sendable () -> Void) {}

    func operatorCommands(after id: Int64, completion: @escaping (Result<[OperatorCommand], any Error>) -> Void) {
        store.perform({ db in try OperatorQueries.pending(db, after: id) }, completion: completion)
    }

    func completeOperatorCommand(id: Int64, result: String, at millis: Int64) {
        store.perform({ db in try OperatorQueries.complete(db, id: id, result: result, at: millis) }, completion: { _ in })
    }

    func close() { store.close() }
}

extension Relay {
    /// The store `[store]` names, opened (PostgreSQL: connected and migrated).
    func openStorage() throws -> any RelayStorage {
        switch config.store.kind {
        case .sqlite: try SQLiteStorage(dataDirectory: config.dataDirectory, loop: loop, logger: logger)
        case .postgres: try PostgresStorage(config.store, cluster: config.cluster, dataDirectory: config.dataDirectory, loop: loop, logger: logger)
        }
    }
}
