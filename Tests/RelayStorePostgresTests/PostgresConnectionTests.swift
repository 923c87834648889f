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

    /// The cluster's membership task heartbeats until the node is declared dead, then reports,
    /// once, that it is fenced, and its heartbeats stop.
    @Test func stopsTheMembershipWhenFenced() async throws {
        let database = try await TestDatabase()
        let identity = NodeIncarnation(node: "n1")
        let writer = database.writer(for: identity)
        let cluster = PostgresCluster(
            settings: database.settings,
            writer: writer,
            identity: identity,
            heartbeat: .milliseconds(20),
            lease: .seconds(5),
            executor: ImmediateExecutor(),
            logger: database.logger
        )
        try await cluster.node.register()
        let fenced = Recorder<String>()
        cluster.start(reports: PostgresCluster.Reports(dead: { _ in }, fenced: { fenced.append($0) }))
        try await eventually("a heartbeat after the first") {
            try await database.integers("SELECT count(*) FROM nodes WHERE heartbeat_at > started_at") == [1]
        }
        _ = try await database.integers("DELETE FROM nodes RETURNING 1")
        try await eventually("fenced") { !fenced.all.isEmpty }
        #expect(fenced.all.count == 1 && fenced.all[0].contains("declared this one dead"))
        await cluster.stop()
        await writer.stop()
    }
}
