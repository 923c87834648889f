import Logging
import PostgresNIO

/// Values every node shares, made once (`meta`): the first node to propose one stores it, and
/// every node, then and later, reads that one.
enum PostgresMetaQueries {
    /// The stored value of `key`, storing `proposed` when there is none yet.
    static func shared(_ connection: PostgresConnection, key: String, proposed: String, logger: Logger) async throws -> String {
        try await connection.query("INSERT INTO meta (key, value) VALUES (\(key), \(proposed)) ON CONFLICT (key) DO NOTHING", logger: logger)
        let rows = try await connection.query("SELECT value FROM meta WHERE key = \(key)", logger: logger)
        for try await value in rows.decode(String.self) { return value }
        throw PostgresStoreError(code: .rejected, message: "the shared value \(key) was stored and then not found")
    }
}
