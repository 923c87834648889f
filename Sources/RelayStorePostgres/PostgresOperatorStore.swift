import Logging
import PostgresNIO
import RelayCore
import Synchronization

/// The operator commands' store on PostgreSQL (`[store] kind = "postgres"`): one connection of
/// its own, held while the command runs, over the same queries the relay's journal uses. Writes
/// that read first run in a transaction, so they agree with a running relay's.
///
/// - Important: each call blocks its thread until PostgreSQL answered (`PostgresStore.waiting`):
///   for a command-line tool's main thread, never for a loop or a task.
public final class PostgresOperatorStore: OperatorStore {
    let settings: PostgresSettings
    let connection: PostgresConnection
    let logger: Logger
    private let closed = Mutex(false)

    /// Connects and checks the schema is this binary's (it never migrates: a newer CLI beside an
    /// older running relay would migrate under it); throws what an operator can act on.
    public init(settings: PostgresSettings, logger: Logger) throws {
        self.settings = settings
        self.logger = logger
        connection = try PostgresStore.waiting(settings, "connect") {
            try await PostgresConnection.connect(configuration: try settings.configuration(applicationName: "clawrelay:cli"), id: 0, logger: logger)
        }
        do {
            try run("check the schema") { connection, logger in try await PostgresMigrations.requireCurrent(connection, logger: logger) }
        } catch {
            close()
            throw error
        }
    }

    /// Runs `work` on the command's connection and waits for it.
    func run<R: Sendable>(_ what: String, _ work: @escaping @Sendable (PostgresConnection, Logger) async throws -> R) throws -> R {
        let (connection, logger) = (connection, logger)
        return try PostgresStore.waiting(settings, what) { try await work(connection, logger) }
    }

    /// `work` in one transaction on the command's connection.
    func transaction<R: Sendable>(_ what: String, _ work: @escaping @Sendable (PostgresConnection, Logger) async throws -> R) throws -> R {
        try run(what) { connection, logger in try await connection.transaction(logger) { try await work(connection, logger) } }
    }

    /// Closes the connection (once; a command that ends without calling it closes it here).
    public func close() {
        guard
            !closed.withLock({ closed in
                defer { closed = true }
                return closed
            })
        else { return }
        let connection = connection
        _ = try? PostgresStore.waiting(settings, "close the connection") { try await connection.close() }
    }

    deinit { close() }

    public func resolve(_ given: String, as kind: OperatorID.Kind) throws -> String {
        let found = try run("look the id up") { connection, logger in
            try await PostgresIDLookup.candidates(connection, given, as: kind, logger: logger)
        }
        // Picked here, so a refusal reaches the operator as its own sentence.
        return try OperatorID.pick(given, as: kind, isExact: found.isExact, following: found.following)
    }

    public func devices() throws -> [DeviceRecord] {
        try run("read the devices") { connection, logger in try await PostgresDeviceQueries.all(connection, logger: logger) }
    }

    public func clusterPresence() throws -> [String: ClusterPresence]? {
        try run("read the devices' presence") { connection, logger in try await PostgresPresenceQueries.listing(connection, logger: logger) }
    }

    public func pendingPairings() throws -> [PendingPairing] {
        try run("read the pending pairings") { connection, logger in try await PostgresOperatorQueries.pendingPairings(connection, logger: logger) }
    }

    public func queueDepths(at millis: Int64) throws -> [String: Int] {
        try run("read the queues") { connection, logger in try await PostgresQueueQueries.depths(connection, at: millis, logger: logger) }
    }

    public func pushTargetListing() throws -> [String: [PushTargetListing]] {
        try run("read the push targets") { connection, logger in try await PostgresPushQueries.listing(connection, logger: logger) }
    }

    public func setStatus(deviceID: String, _ status: DeviceRecord.Status) throws -> Bool {
        try run("change the device") { connection, logger in
            try await PostgresDeviceQueries.setStatus(connection, id: deviceID, status, logger: logger)
        }
    }

    public func allow(deviceID: String) throws -> DeviceRecord? {
        try transaction("change the device") { connection, logger -> DeviceRecord? in
            guard let device = try await PostgresDeviceQueries.device(connection, id: deviceID, lock: true, logger: logger),
                device.status.refusesPairing
            else { return nil }
            _ = try await PostgresDeviceQueries.setStatus(connection, id: deviceID, device.status == .denied ? .approved : .unpaired, logger: logger)
            return device
        }
    }

    public func setAdmin(deviceID: String, _ isAdmin: Bool) throws -> Bool {
        try run("change the device") { connection, logger in
            try await PostgresDeviceQueries.setAdmin(connection, id: deviceID, isAdmin, logger: logger)
        }
    }

    public func setPushTarget(deviceID: String, kind: String, token: String, at millis: Int64) throws -> Bool {
        try transaction("store the push target") { connection, logger -> Bool in
            guard try await PostgresDeviceQueries.device(connection, id: deviceID, lock: true, logger: logger)?.status == .approved else {
                return false
            }
            try await PostgresPushQueries.upsert(
                connection,
                deviceID: deviceID,
                kind: kind,
                token: token,
                platform: "cli",
                at: millis,
                logger: logger
            )
            return true
        }
    }

    public func removePushTarget(deviceID: String, kind: String) throws -> Bool {
        try transaction("remove the push target") { connection, logger -> Bool in
            guard try await PostgresDeviceQueries.device(connection, id: deviceID, lock: true, logger: logger)?.status == .approved else {
                return false
            }
            return try await PostgresPushQueries.remove(connection, deviceID: deviceID, kind: kind, logger: logger)
        }
    }

    /// Queues the command for the node holding what it acts on, or for every node
    /// (`PostgresControlQueries.enqueue`), and wakes the nodes.
    public func enqueue(_ action: OperatorCommand.Action, deviceID: String, userID: String?, at millis: Int64) throws -> Int64 {
        try run("queue the command") { connection, logger in
            try await PostgresControlQueries.enqueue(connection, action: action, deviceID: deviceID, userID: userID, at: millis, logger: logger)
        }
    }

    /// The command's answer, settled first: a command whose node died, or that every live node
    /// acknowledged, is answered here.
    public func result(ofCommand id: Int64) throws -> String? {
        let now = SystemClock().nowMillis()
        return try transaction("read the command's result") { connection, logger in
            try await PostgresControlQueries.settle(connection, id: id, at: now, logger: logger)
        }
    }

    public func nodeDataDirectories() throws -> [String: String] {
        try run("read the nodes' data directories") { connection, logger in
            let rows = try await connection.query("SELECT node_id, data_dir FROM node_data_dirs", logger: logger)
            var directories: [String: String] = [:]
            for try await (node, directory) in rows.decode((String, String).self) { directories[node] = directory }
            return directories
        }
    }

    public func accounts() throws -> [AccountStatus] {
        try run("read the accounts") { connection, logger in try await PostgresAccountQueries.all(connection, logger: logger) }
    }

    public func addPairingLink(tokenHash: String, expiresAt: Int64) throws -> String {
        try transaction("store the pairing link") { connection, logger in
            try await PostgresPairingLinkQueries.addLink(connection, tokenHash: tokenHash, expiresAt: expiresAt, logger: logger)
            return try await PostgresPairingLinkQueries.fingerprint(connection, logger: logger)
        }
    }
}
