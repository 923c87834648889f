import Foundation
import Logging
import PostgresNIO
import RelayCore
import RelayStorePostgres
import Synchronization

/// A fresh database on the tests' shared PostgreSQL server, migrated; the server stops and its
/// directory goes when the last `TestDatabase` is released (and at exit, whatever is left).
final class TestDatabase {
    let server: PostgresServer
    let name: String
    let settings: PostgresSettings
    let logger = Logger(label: "postgres-test", factory: { _ in SwiftLogNoOpLogHandler() })

    init(migrate: Bool = true) async throws {
        server = try await SharedServer.acquire(logger: logger)
        name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        do {
            let admin = try await PostgresConnection.connect(
                configuration: try server.settings(database: "postgres").configuration(applicationName: "fixture"),
                id: 0,
                logger: logger
            )
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
            try await admin.close()
            settings = try server.settings(database: name)
            if migrate {
                let connection = try await connect()
                try await PostgresMigrations.migrate(connection, logger: logger)
                try await connection.close()
            }
        } catch {
            SharedServer.release()
            throw error
        }
    }

    deinit { SharedServer.release() }

    func connect(_ applicationName: String = "test") async throws -> PostgresConnection {
        try await PostgresConnection.connect(configuration: settings.configuration(applicationName: applicationName), id: 0, logger: logger)
    }

    /// A writer for `node` whose completions run on the writer's own task.
    func writer(for node: NodeIncarnation) -> PostgresWriter {
        PostgresWriter(settings: settings, node: node, executor: ImmediateExecutor(), logger: logger)
    }
}

/// Runs jobs where they are handed over (the writer's task): enough for tests that await results.
struct ImmediateExecutor: LoopExecutor {
    func execute(_ job: @escaping @Sendable () -> Void) { job() }
    var isOnLoop: Bool { true }
}

/// The one server the process's tests share, counted by its users.
enum SharedServer {
    private struct State {
        var starting: Task<PostgresServer, any Error>?
        var users = 0
    }

    private static let state = Mutex(State())
    private static let stopped = DispatchGroup()
    private static let exitHook: Void = { atexit { SharedServer.waitForStops() } }()

    static func acquire(logger: Logger) async throws -> PostgresServer {
        _ = exitHook
        let task = state.withLock { state in
            state.users += 1
            if state.starting == nil { state.starting = Task { try await PostgresServer.start(logger: logger) } }
            return state.starting!
        }
        do {
            return try await task.value
        } catch {
            release()
            throw error
        }
    }

    /// The last user's release stops the server on a thread of its own.
    static func release() {
        let task = state.withLock { state -> Task<PostgresServer, any Error>? in
            state.users -= 1
            guard state.users == 0 else { return nil }
            defer { state.starting = nil }
            return state.starting
        }
        guard let task else { return }
        stopped.enter()
        Thread {
            let semaphore = DispatchSemaphore(value: 0)
            let server = Mutex<PostgresServer?>(nil)
            Task {
                let started = try? await task.value
                server.withLock { $0 = started }
                semaphore.signal()
            }
            semaphore.wait()
            server.withLock { $0 }?.stop()
            stopped.leave()
        }
        .start()
    }

    /// At exit: servers being stopped finish stopping (their directories removed) first.
    private static func waitForStops() {
        _ = stopped.wait(timeout: .now() + 20)
    }
}
