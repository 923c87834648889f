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
        #expect(
            try await database.integers("SELECT count(*) FROM pg_proc WHERE proname = 'relay_turn_writes' AND prosrc NOT LIKE '%read_cursors%'") == [
                1
            ],
            "one relay_turn_writes, migration 11's: an accept leaves the read cursor to its readers"
        )
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

    /// The operator commands' check: a schema that is not this binary's is refused, never migrated.
    @Test(.timeLimit(.minutes(1))) func theCommandsCheckRefusesAnEmptyOlderOrNewerSchemaAndMigratesNothing() async throws {
        let database = try await TestDatabase(migrate: false)
        let connection = try await database.connect()
        let refusal = { (expected: String) async in
            await #expect {
                try await PostgresMigrations.requireCurrent(connection, logger: database.logger)
            } throws: { error in
                let message = (error as? PostgresStoreError)?.message ?? ""
                return message.contains(expected)
            }
        }
        await refusal("has no clawrelay schema yet: start the relay (clawrelay serve)")
        #expect(try await database.integers("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == [0], "nothing was created")
        try await PostgresMigrations.migrate(connection, logger: database.logger)
        try await PostgresMigrations.requireCurrent(connection, logger: database.logger)
        let latest = PostgresMigrations.latestVersion
        try await connection.query("DELETE FROM schema_migrations WHERE version = \(latest)", logger: database.logger)
        await refusal("older than this clawrelay's \(latest)")
        try await connection.query("INSERT INTO schema_migrations (version) VALUES (\(latest + 1))", logger: database.logger)
        await refusal("newer than this binary's \(latest): upgrade clawrelay")
        try await connection.close()
    }
}
