import Foundation
import Logging
import PostgresHarness
import RelayStorePostgres

/// The tests' PostgreSQL server: `LocalPostgres` (PostgresHarness: `initdb` and `postgres` on a
/// loopback port in a temporary directory, as `nobody` under root), started and stopped off the
/// cooperative pool.
final class PostgresServer: Sendable {
    static let user = LocalPostgres.user

    private let local: LocalPostgres
    var directory: String { local.directory }
    var port: Int { local.port }

    private init(local: LocalPostgres) { self.local = local }

    /// Creates the cluster and starts the server; returns once it accepts connections.
    static func start(logger: Logger) async throws -> PostgresServer {
        PostgresServer(local: try await BlockingWork.run { try LocalPostgres() })
    }

    /// Settings for `database` over loopback TCP.
    func settings(database: String) throws -> PostgresSettings {
        try PostgresSettings(url: local.url(database: database))
    }

    /// Stops the server and removes its directory (blocking: call it off the cooperative pool).
    func stop() { local.stop() }
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs blocking work on a thread of its own and resumes the caller with its result.
enum BlockingWork {
    static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.name = "postgres-fixture"
            thread.start()
        }
    }

    static func perform(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { continuation in
            Thread {
                work()
                continuation.resume()
            }
            .start()
        }
    }
}
