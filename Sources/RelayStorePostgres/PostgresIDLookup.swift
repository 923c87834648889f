import Logging
import PostgresNIO
import RelayCore

/// Ids an operator typed, looked up in PostgreSQL with `OperatorID`'s grammar (ids compared and
/// sorted byte by byte, as SQLite does).
enum PostgresIDLookup {
    /// What `OperatorID.pick` chooses from: whether `given` is an id, and the ids that sort right
    /// after it (none needed for an id, or a prefix too short to be one).
    static func candidates(
        _ connection: PostgresConnection,
        _ given: String,
        as kind: OperatorID.Kind,
        logger: Logger
    ) async throws -> (isExact: Bool, following: [String]) {
        let ids: String =
            switch kind {
            case .device: "SELECT id FROM devices UNION SELECT device_id FROM pending_pairings"
            case .conversation: "SELECT id FROM conversations"
            }
        let exact = try await connection.first("SELECT id FROM (\(unescaped: ids)) ids WHERE id = \(given)", as: String.self, logger: logger)
        guard exact == nil, given.count >= OperatorID.minimumPrefix else { return (exact != nil, []) }
        // Ids that start with `given` sort right after it.
        let rows = try await connection.query(
            "SELECT id FROM (\(unescaped: ids)) ids WHERE id COLLATE \"C\" > \(given) ORDER BY id COLLATE \"C\" LIMIT \(OperatorID.namedMatches + 1)",
            logger: logger
        )
        var following: [String] = []
        for try await id in rows.decode(String.self) { following.append(id) }
        return (false, following)
    }
}
