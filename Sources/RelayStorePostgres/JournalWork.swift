import Logging
import PostgresNIO
import RelayCore

/// One operation of `PostgresJournal` on the writer's connection: `run` does its queries and
/// returns the report to deliver on the loop (its caller's completion with the result); `fail`
/// reports what stopped it. Operations run one at a time, in submission order, and their reports
/// reach the loop in that order.
struct JournalWork: Sendable {
    /// What the operation does, for error messages ("store a push target").
    var what: String
    var run: @Sendable (PostgresConnection, Logger) async throws -> @Sendable () -> Void
    var fail: @Sendable (any Error) -> Void

    /// `work`, whose result goes to `completion` on `executor` (the loop).
    static func reporting<R: Sendable>(
        _ what: String,
        on executor: any LoopExecutor,
        _ work: @escaping @Sendable (PostgresConnection, Logger) async throws -> R,
        completion: @escaping (Result<R, any Error>) -> Void
    ) -> JournalWork {
        let completion = LoopBound(completion, loop: executor)
        return JournalWork(
            what: what,
            run: { connection, logger in
                let value = try await work(connection, logger)
                return { completion.value(.success(value)) }
            },
            fail: { error in completion.value(.failure(error)) }
        )
    }
}

/// An error carried from the writer's task to the loop.
///
/// `@unchecked Sendable` holds because the error is created by the operation, handed over once and
/// only read afterwards (the core's errors are value types).
struct UncheckedError: @unchecked Sendable {
    let error: any Error

    init(_ error: any Error) { self.error = error }
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

extension PostgresConnection {
    /// The first column of the first row `query` returns, nil when it returns none.
    func first<Value: PostgresDecodable & Sendable>(_ query: PostgresQuery, as type: Value.Type, logger: Logger) async throws -> Value?
    where Value._DecodableType == Value {
        for try await value in try await self.query(query, logger: logger).decode(Value?.self) { return value }
        return nil
    }
}
