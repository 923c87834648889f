import Logging
import PostgresNIO
import RelayCore

/// Ids an operator typed, looked up in PostgreSQL with `OperatorID`'s grammar (ids compared and
/// sorted byte by byte, as SQLite does).
enum PostgresIDLookup {
    /// The whole id `given` names (`OperatorID.pick`).
    static func resolve(_ connection: PostgresConnection, _ given: String, as kind: OperatorID.Kind, logger: Logger) async throws -> String {
        let ids: String =
            switch kind {
            case .device: "SELECT id FROM devices UNION SELECT device_id FROM pending_pairings"
            case .conversation: "SELECT id FROM conversations"
            }
        let exact = try await connection.first("SELECT id FROM (\(unescaped: ids)) ids WHERE id = \(given)", as: String.self, logger: logger)
        guard exact == nil, given.count >= OperatorID.minimumPrefix else {
            return try OperatorID.pick(given, as: kind, isExact: exact != nil, following: [])
        }
        // Ids that start with `given` sort right after it.
        let rows = try await connection.query(
            "SELECT id FROM (\(unescaped: ids)) ids WHERE id COLLATE \"C\" > \(given) ORDER BY id COLLATE \"C\" LIMIT \(OperatorID.namedMatches + 1)",
            logger: logger
        )
        var following: [String] = []
        for try await id in rows.decode(String.self) { following.append(id) }
        return try OperatorID.pick(given, as: kind, isExact: false, following: following)
    }
}
