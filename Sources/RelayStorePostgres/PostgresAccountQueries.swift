import Logging
import PostgresNIO
import RelayCore

/// Upstream accounts' last reported states (`accounts`), for `clawrelay accounts`.
enum PostgresAccountQueries {
    /// Stores an account's latest state, replacing the one before.
    static func record(_ connection: PostgresConnection, _ status: AccountStatus, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO accounts (name, kind, state, detail, updated_ms)
            VALUES (\(status.name), \(status.kind), \(status.state), \(status.detail), \(status.updatedAt))
            ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, state = excluded.state, detail = excluded.detail, updated_ms = excluded.updated_ms
            """,
            logger: logger
        )
    }

    /// Every account, by name, with the live node holding it in a cluster.
    static func all(_ connection: PostgresConnection, logger: Logger) async throws -> [AccountStatus] {
        let rows = try await connection.query(
            """
            SELECT a.name, a.kind, a.state, a.detail, a.updated_ms, l.node_id FROM accounts a
            LEFT JOIN account_leases l ON l.account = a.name
              AND EXISTS (SELECT 1 FROM nodes n WHERE n.incarnation = l.incarnation AND n.expires_at >= now())
            ORDER BY a.name COLLATE "C"
            """,
            logger: logger
        )
        var accounts: [AccountStatus] = []
        for try await (name, kind, state, detail, updated, node) in rows.decode((String, String, String, String, Int64, String?).self) {
            accounts.append(AccountStatus(name: name, kind: kind, state: state, detail: detail, updatedAt: updated, node: node))
        }
        return accounts
    }

    /// An account a reload removed.
    static func delete(_ connection: PostgresConnection, name: String, logger: Logger) async throws {
        try await connection.query("DELETE FROM accounts WHERE name = \(name)", logger: logger)
    }

    /// Accounts a previous run left behind are no longer linked.
    ///
    /// - Important: with several nodes sharing the table this clears the others' accounts too;
    ///   call it only where SQLite did (a lone relay starting).
    static func clear(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("DELETE FROM accounts", logger: logger)
    }
}
