import Foundation
import PostgresNIO
import RelayCore
import RelayStorePostgres
import Synchronization

/// Polls `condition` every 10 ms until it holds; fails the test when `timeout` passes first.
func eventually(_ what: String, timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw FixtureError("timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

extension PostgresWriter {
    func accept(_ request: AcceptRequest) async -> Result<PostgresAcceptance, PostgresStoreError> {
        await withCheckedContinuation { continuation in accept(request) { continuation.resume(returning: $0) } }
    }

    func claim(_ conversationID: String) async -> Result<ClaimResult, PostgresStoreError> {
        await withCheckedContinuation { continuation in claim(conversationID: conversationID) { continuation.resume(returning: $0) } }
    }

    func end(_ ending: TurnEnding) async -> Result<FencedWrite, PostgresStoreError> {
        await withCheckedContinuation { continuation in end(ending) { continuation.resume(returning: $0) } }
    }
}

/// A message from `device` to conversation `conversation` of `user`, accepted by `node` when given.
func request(
    user: String = "u1",
    conversation: String = "c1",
    device: String = "d1",
    client: String,
    content: String = "hello",
    attachments: String? = nil,
    node: NodeIncarnation? = nil
) -> AcceptRequest {
    var message = UserMessage(
        conversationID: conversation,
        userID: user,
        deviceID: device,
        clientID: client,
        content: content,
        attachmentsJSON: attachments
    )
    message.acceptingNode = node
    return AcceptRequest(message, backend: "echo")
}

/// Collects what a callback reports, for tests to poll.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

extension TestDatabase {
    /// Runs `body` on a connection of its own, closed however `body` ends.
    func withConnection<Value>(_ applicationName: String = "test", _ body: (PostgresConnection) async throws -> Value) async throws -> Value {
        let connection = try await connect(applicationName)
        do {
            let value = try await body(connection)
            try await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Runs `query` and returns its first column.
    func column<Value: PostgresDecodable & Sendable>(
        _ query: PostgresQuery,
        as type: Value.Type,
        applicationName: String = "test"
    ) async throws
        -> [Value]
    {
        try await withConnection(applicationName) { connection in
            var values: [Value] = []
            for try await value in try await connection.query(query, logger: logger).decode(Value.self) { values.append(value) }
            return values
        }
    }

    /// Runs `sql` and returns its first column as Int64 values.
    func integers(_ sql: String) async throws -> [Int64] { try await column(PostgresQuery(unsafeSQL: sql), as: Int64.self) }

    /// Terminates the sessions named `applicationName` in this database; how many there were.
    @discardableResult
    func terminate(_ applicationName: String) async throws -> Int {
        try await integers(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(name)' AND application_name = '\(applicationName)'"
        ).first.map(Int.init) ?? 0
    }
}

/// Registers a node per id (each holds its lock on a control connection of its own).
func registeredNodes(_ database: TestDatabase, _ ids: String...) async throws -> [PostgresNode] {
    var nodes: [PostgresNode] = []
    for id in ids {
        let node = PostgresNode(settings: database.settings, identity: NodeIncarnation(node: id), logger: database.logger)
        try await node.register()
        nodes.append(node)
    }
    return nodes
}

/// The run id of a fresh accept.
func acceptedRun(_ writer: PostgresWriter, _ request: AcceptRequest) async throws -> String {
    let acceptance = try await writer.accept(request).get()
    guard case .fresh(let run, _, _, _, _) = acceptance else { throw FixtureError("not fresh: \(acceptance)") }
    return run
}

extension PostgresTurnLedger {
    func claim(_ runID: String, conversation: String = "c1", node: NodeIncarnation) async -> Result<TurnClaim, any Error> {
        await withCheckedContinuation { continuation in
            claim(runID: runID, conversationID: conversation, node: node) { continuation.resume(returning: $0) }
        }
    }

    func declareDead(
        _ node: NodeIncarnation,
        survivor: NodeIncarnation,
        reason: String = "the relay node stopped"
    ) async
        -> Result<DeadNodeTurns, any Error>
    {
        await withCheckedContinuation { continuation in
            declareDead(node, survivor: survivor, reason: reason, now: 1_000) { continuation.resume(returning: $0) }
        }
    }
}

/// Runs `body` with registered nodes, closing them however it ends (a node dropped unclosed traps).
func withNodes<Value>(_ database: TestDatabase, _ ids: String..., body: ([PostgresNode]) async throws -> Value) async throws -> Value {
    var nodes: [PostgresNode] = []
    for id in ids { nodes += try await registeredNodes(database, id) }
    do {
        let value = try await body(nodes)
        for node in nodes { await node.close() }
        return value
    } catch {
        for node in nodes { await node.close() }
        throw error
    }
}

/// A loop on a serial queue: `isOnLoop` is true only in its jobs.
final class QueueLoop: LoopExecutor, @unchecked Sendable {
    // `@unchecked Sendable` holds because both stored values are immutable and thread-safe (dispatch).
    private let queue = DispatchQueue(label: "test-loop")
    private let key = DispatchSpecificKey<Bool>()

    init() { queue.setSpecific(key: key, value: true) }

    func execute(_ job: @escaping @Sendable () -> Void) { queue.async(execute: job) }

    var isOnLoop: Bool { DispatchQueue.getSpecific(key: key) == true }

    /// Runs `body` on the loop and waits for it without blocking the caller's thread.
    func run(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { continuation in
            queue.async {
                body()
                continuation.resume()
            }
        }
    }
}
