import Logging
import PostgresNIO

/// One operation of `PostgresJournal` on the writer's connection: `run` does its queries and
/// returns the report to deliver on the loop (its caller's completion with the result); `fail`
/// reports what stopped it. Operations run one at a time, in submission order, and their reports
/// reach the loop in that order.
struct JournalWork: Sendable {
    /// What the operation does, for error messages ("store a push target").
    var what: String
    var run: @Sendable (PostgresConnection, Logger) async throws -> @Sendable () -> Void
    var fail: @Sendable (PostgresStoreError) -> Void
}

extension PostgresConnection {
    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<R>(_ logger: Logger, _ body: () async throws -> R) async throws -> R {
        try await query("BEGIN", logger: logger)
        do {
            let value = try await body()
            try await query("COMMIT", logger: logger)
            return value
        } catch {
            if !isClosed { _ = try? await query("ROLLBACK", logger: logger) }
            throw error
        }
    }
}
