import Logging
import PostgresNIO
import Synchronization

/// A connection opened on first use, and again on the next use after it closed; the queries of
/// its users share it (postgres-nio runs them one at a time, in order).
final class SharedConnection: Sendable {
    private let settings: PostgresSettings
    private let applicationName: String
    private let logger: Logger
    private let current: Mutex<Task<PostgresConnection, any Error>?> = Mutex(nil)

    init(settings: PostgresSettings, applicationName: String, logger: Logger) {
        self.settings = settings
        self.applicationName = applicationName
        self.logger = logger
    }

    /// The open connection, or a new one.
    func connection() async throws -> PostgresConnection {
        for _ in 0..<2 {
            let task = current.withLock { current in
                if let current { return current }
                let (settings, name, logger) = (settings, applicationName, logger)
                let task = Task {
                    try await PostgresConnection.connect(configuration: try settings.configuration(applicationName: name), id: 1, logger: logger)
                }
                current = task
                return task
            }
            let connection: PostgresConnection
            do {
                connection = try await task.value
            } catch {
                forget(task)
                if let error = error as? PostgresStoreError { throw error }
                throw PostgresStoreError(
                    code: .connectionLost,
                    message: "cannot connect to PostgreSQL (\(settings)): \(PostgresStoreError.summary(of: error))"
                )
            }
            if !connection.isClosed { return connection }
            forget(task)
        }
        throw PostgresStoreError(code: .connectionLost, message: "the connection to PostgreSQL (\(settings)) closed as it opened")
    }

    /// Closes the connection (a later use opens a new one).
    func close() async {
        let task = current.withLock { current in
            defer { current = nil }
            return current
        }
        try? await task?.value.close()
    }

    private func forget(_ task: Task<PostgresConnection, any Error>) {
        current.withLock { current in
            if current == task { current = nil }
        }
    }
}
