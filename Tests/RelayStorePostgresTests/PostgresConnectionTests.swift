import PostgresNIO
import RelayCore
import Testing

@testable import RelayStorePostgres

/// The settings reach the server the ways the URL allows.
@Suite(.timeLimit(.minutes(1))) struct PostgresConnectionTests {
    @Test func connectsThroughTheUnixSocket() async throws {
        let database = try await TestDatabase()
        let url = "postgres://\(PostgresServer.user)@:\(database.server.port)/\(database.name)?host=\(database.server.directory)"
        let settings = try PostgresSettings(url: url)
        let connection = try await PostgresConnection.connect(
            configuration: settings.configuration(applicationName: "socket"),
            id: 1,
            logger: database.logger
        )
        var path = ""
        for try await value in try await connection.query("SELECT coalesce(inet_client_addr()::text, 'socket')", logger: database.logger).decode(
            String.self
        ) {
            path = value
        }
        #expect(path == "socket")
        try await connection.close()
    }

    @Test func asksForTLSOnlyWhenSSLModeSaysSo() throws {
        #expect(try PostgresSettings(url: "postgres://relay@h/d").configuration(applicationName: "a").tls.isAllowed == false)
        for mode in ["require", "verify-full"] {
            let configuration = try PostgresSettings(url: "postgres://relay@h/d?sslmode=\(mode)").configuration(applicationName: "a")
            #expect(configuration.tls.isEnforced)
        }
    }

    /// The loop heartbeats until the node is declared dead, then stops and says it was fenced.
    @Test func stopsTheNodeLoopWhenFenced() async throws {
        let database = try await TestDatabase()
        let node = PostgresNode(settings: database.settings, identity: NodeIncarnation(node: "n1"), logger: database.logger)
        try await node.register()
        let loop = Task { try await node.run(every: .milliseconds(20)) }
        try await eventually("a heartbeat after the first") {
            try await database.integers("SELECT count(*) FROM nodes WHERE heartbeat_at > started_at") == [1]
        }
        _ = try await database.integers("DELETE FROM nodes RETURNING 1")
        #expect(try await loop.value == false)
        await node.close()
    }
}
