import PostgresNIO
import Testing

@testable import RelayStorePostgres

@Suite struct PostgresMigrationsTests {
    @Test(.timeLimit(.minutes(1))) func migratingTwiceChangesNothing() async throws {
        let database = try await TestDatabase(migrate: false)
        let connection = try await database.connect()
        #expect(try await PostgresMigrations.migrate(connection, logger: database.logger) == PostgresSchema.migrations.map(\.version))
        let tables = try await database.integers("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        #expect(try await PostgresMigrations.migrate(connection, logger: database.logger) == [])
        #expect(
            try await database.integers("SELECT version FROM schema_migrations ORDER BY version")
                == PostgresSchema.migrations.map { Int64($0.version) }
        )
        #expect(try await database.integers("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == tables)
        #expect(try await database.integers("SELECT count(*) FROM pg_indexes WHERE indexname = 'turns_one_running'") == [1])
        try await connection.close()
    }

    @Test(.timeLimit(.minutes(1))) func refusesADatabaseFromANewerBinary() async throws {
        let database = try await TestDatabase()
        let connection = try await database.connect()
        try await connection.query(
            "INSERT INTO schema_migrations (version) VALUES (\(PostgresMigrations.latestVersion + 1))",
            logger: database.logger
        )
        await #expect {
            try await PostgresMigrations.migrate(connection, logger: database.logger)
        } throws: { error in
            let error = error as? PostgresStoreError
            return error?.code == .migration && error?.message.contains("version \(PostgresMigrations.latestVersion + 1), newer") == true
        }
        try await connection.close()
    }
}
