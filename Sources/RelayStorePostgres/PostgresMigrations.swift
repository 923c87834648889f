import Logging
import PostgresNIO

/// Brings a database's schema up to `PostgresSchema.latestVersion`, each migration in its own
/// transaction, recorded in `schema_migrations`; running it again does nothing, and a database
/// migrated by a newer binary is refused.
public enum PostgresMigrations {
    /// The version this binary's schema has.
    public static var latestVersion: Int { PostgresSchema.latestVersion }

    /// Applies the missing migrations; returns the versions applied (empty when up to date).
    ///
    /// - Important: concurrent callers (several nodes starting) are serialized by a transaction
    ///   advisory lock, so each migration runs once.
    @discardableResult
    public static func migrate(_ connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await run(
            connection,
            logger: logger,
            "CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        var applied: [Int] = []
        for migration in PostgresSchema.migrations {
            let done = try await apply(migration, connection, logger: logger)
            if done { applied.append(migration.version) }
        }
        // Checked after, too: a newer binary may have migrated while this one waited for the lock.
        _ = try await currentVersion(connection, logger: logger)
        return applied
    }

    /// The newest version applied to the database (0 for none); refuses one newer than this binary.
    public static func currentVersion(_ connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query("SELECT coalesce(max(version), 0) FROM schema_migrations", logger: logger)
        var version = 0
        for try await (value) in rows.decode(Int.self) { version = value }
        guard version <= latestVersion else {
            throw PostgresStoreError(
                code: .migration,
                message: "the database's schema is version \(version), newer than this binary's \(latestVersion): upgrade clawrelay on this node"
            )
        }
        return version
    }

    /// Refuses a database whose schema is not this binary's (a command-line tool's check: it
    /// never migrates under a running relay); says what to run.
    public static func requireCurrent(_ connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)
        var exists = false
        for try await value in rows.decode(Bool.self) { exists = value }
        let version = exists ? try await currentVersion(connection, logger: logger) : 0
        guard version < latestVersion else { return }
        let what = version == 0 ? "has no clawrelay schema yet" : "has schema version \(version), older than this clawrelay's \(latestVersion)"
        throw PostgresStoreError(
            code: .migration,
            message: "the database \(what): start the relay (clawrelay serve) with this version first, which migrates it; this command does not"
        )
    }

    private static func apply(_ migration: PostgresSchema.Migration, _ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await run(connection, logger: logger, "BEGIN")
        do {
            try await run(connection, logger: logger, "SELECT pg_advisory_xact_lock(hashtext('clawrelay-migrations'))")
            guard try await currentVersion(connection, logger: logger) < migration.version else {
                try await run(connection, logger: logger, "COMMIT")
                return false
            }
            for statement in migration.statements { try await run(connection, logger: logger, statement) }
            try await connection.query("INSERT INTO schema_migrations (version) VALUES (\(migration.version))", logger: logger)
            try await run(connection, logger: logger, "COMMIT")
            logger.debug("postgres: applied migration", metadata: ["version": "\(migration.version)"])
            return true
        } catch {
            try? await run(connection, logger: logger, "ROLLBACK")
            if let error = error as? PostgresStoreError { throw error }
            throw PostgresStoreError(code: .migration, message: "migration \(migration.version) failed: \(PostgresStoreError.summary(of: error))")
        }
    }

    private static func run(_ connection: PostgresConnection, logger: Logger, _ sql: String) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
    }
}
