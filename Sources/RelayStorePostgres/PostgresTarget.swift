import Logging
import PostgresNIO
import RelayCore

/// One connection driven from a thread that blocks on each statement: `SQLiteToPostgres` reads
/// SQLite synchronously and sends what it read between reads.
///
/// - Important: call it from a thread of its own, never from the cooperative pool.
final class PostgresTarget: Sendable {
    private let connection: PostgresConnection
    private let settings: PostgresSettings
    private let logger: Logger

    init(settings: PostgresSettings, logger: Logger) throws {
        self.settings = settings
        self.logger = logger
        let result = PostgresStore.wait { () -> Result<PostgresConnection, any Error> in
            do {
                let configuration = try settings.configuration(applicationName: "clawrelay:migrate")
                return .success(try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger))
            } catch {
                return .failure(error)
            }
        }
        connection = try Self.settle(result, "connect", settings)
    }

    /// Runs `work` on the connection and waits for it; a failure says what was being done.
    func run<R: Sendable>(_ what: String, _ work: @escaping @Sendable (PostgresConnection, Logger) async throws -> R) throws -> R {
        let (connection, logger) = (self.connection, self.logger)
        let result = PostgresStore.wait { () -> Result<R, any Error> in
            do { return .success(try await work(connection, logger)) } catch { return .failure(error) }
        }
        return try Self.settle(result, what, settings)
    }

    /// Runs one statement; `what` names it in an error.
    func execute(_ sql: String, _ what: String) throws {
        try run(what) { connection, logger in
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        }
    }

    /// Sends the rows `batch` gathered, if any.
    func send(_ batch: inout CopyBatch) throws {
        guard let query = batch.take() else { return }
        try run("copy \(batch.table)") { connection, logger in _ = try await connection.query(query, logger: logger) }
    }

    func close() {
        let connection = connection
        _ = PostgresStore.wait { try? await connection.close() }
    }

    private static func settle<R>(_ result: Result<R, any Error>, _ what: String, _ settings: PostgresSettings) throws -> R {
        do {
            return try result.get()
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            let code: PostgresStoreError.Code = PostgresStoreError.isConnectionFailure(error) ? .connectionLost : .rejected
            throw PostgresStoreError(code: code, message: "cannot \(what) on PostgreSQL (\(settings)): \(PostgresStoreError.summary(of: error))")
        }
    }
}
