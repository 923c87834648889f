import GRDB
import RelayCore

public enum AccountQueries {
    public static func record(_ db: Database, _ status: AccountStatus) throws {
        try db.run(
            "INSERT OR REPLACE INTO accounts (name, kind, state, detail, updated_at) VALUES (?, ?, ?, ?, ?)",
            [status.name, status.kind, status.state, status.detail, status.updatedAt]
        )
    }

    public static func all(_ db: Database) throws -> [AccountStatus] {
        try db.rows("SELECT * FROM accounts ORDER BY name").map {
            AccountStatus(name: $0["name"], kind: $0["kind"], state: $0["state"], detail: $0["detail"], updatedAt: $0["updated_at"])
        }
    }

    /// An account a reload removed.
    public static func delete(_ db: Database, name: String) throws { try db.run("DELETE FROM accounts WHERE name = ?", [name]) }

    /// Accounts a previous run left behind are no longer linked.
    public static func clear(_ db: Database) throws { try db.run("DELETE FROM accounts") }
}
