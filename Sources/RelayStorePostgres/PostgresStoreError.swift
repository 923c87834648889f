import PostgresNIO

/// What went wrong in the PostgreSQL store, in words a user can act on.
public struct PostgresStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of failure; the message says which setting, file or row.
    public enum Code: String, Sendable, Hashable {
        /// A `[store]` setting (URL, password file, pool size, sslmode) is wrong.
        case invalidSettings
        /// The database's schema is newer than this binary, or a migration failed.
        case migration
        /// The connection failed before the outcome could be known, and re-reading did not settle it.
        case connectionLost
        /// The database refused the statement (a constraint, a bad value).
        case rejected
        /// The writer, node or listener was stopped.
        case stopped
    }

    public let code: Code
    public let message: String

    public var description: String { "\(code.rawValue): \(message)" }

    /// True for failures of the connection itself (closed, terminated by the server, unreachable),
    /// where a statement in flight may or may not have committed; false for errors the server
    /// raised and rolled back.
    static func isConnectionFailure(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return !(error is PostgresStoreError) }
        guard error.code == .server else { return true }
        let state = error.serverInfo?[.sqlState] ?? ""
        // 57P01…57P05: the server is shutting the session down; 08xxx: connection exceptions.
        return state.hasPrefix("57P") || state.hasPrefix("08")
    }

    /// The server's own message for `error` (without the query text, which may hold content).
    static func summary(of error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return "\(message) (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?"))"
            }
            // A connection that failed says why (refused, a TLS or DNS error), not only that it failed.
            if let underlying = error.underlying { return "\(error.code) (\(underlying))" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}
