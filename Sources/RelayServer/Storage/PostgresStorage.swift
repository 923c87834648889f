import Foundation
import Logging
import RelayCore
import RelayStore
import RelayStorePostgres

/// `[store] kind = "postgres"`: the relay's store in a PostgreSQL database it owns (one node so
/// far; several nodes are issue 29's next step, docs/cluster.md).
final class PostgresStorage: RelayStorage {
    let store: PostgresStore

    init(_ settings: StoreSettings, dataDirectory: String, loop: any LoopExecutor, logger: Logger) throws {
        let postgres = try Self.settings(settings)
        let node = NodeIncarnation(node: Self.defaultNodeID(dataDirectory: dataDirectory))
        logger.info("store: PostgreSQL", metadata: ["database": "\(postgres)", "node": "\(node)"])
        store = try PostgresStore(settings: postgres, node: node, executor: loop, logger: logger)
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

    func prepareForStart(now: Int64) throws -> [MessageRecord] { try store.prepareForStart(now: now) }
    func storedDevices() throws -> [DeviceRecord] { try store.storedDevices() }
    func gatewayFingerprint() throws -> String { try store.gatewayFingerprint() }
    func lastOperatorCommand() throws -> Int64 { try store.lastOperatorCommand() }

    func operatorCommands(after id: Int64, completion: @escaping (Result<[OperatorCommand], any Error>) -> Void) {
        store.operatorCommands(after: id, completion: completion)
    }

    func completeOperatorCommand(id: Int64, result: String, at millis: Int64) {
        store.completeOperatorCommand(id: id, result: result, at: millis)
    }

    func close() { store.close() }
}
