import PostgresNIO
import RelayCore
import Testing

@testable import RelayStorePostgres

/// A batch whose connection dies before its reply: the writer answers from what the database
/// holds, by key, or with an error — never with a success it cannot show.
@Suite(.timeLimit(.minutes(1))) struct PostgresAmbiguousCommitTests {
    /// The writer's backend is terminated while its batch waits for a row lock (so it is in
    /// flight for certain): the batch rolled back, and the accept fails without a false success.
    @Test func failsABatchKilledInFlight() async throws {
        let database = try await TestDatabase()
        let writer = database.writer(for: NodeIncarnation(node: "n1"))
        _ = try await writer.accept(request(client: "first")).get()
        let holder = try await database.connect()
        try await holder.query("BEGIN", logger: database.logger)
        try await holder.query("SELECT last FROM streams WHERE stream_id = 'u1' FOR UPDATE", logger: database.logger)

        let result = Recorder<Result<PostgresAcceptance, PostgresStoreError>>()
        writer.accept(request(client: "blocked")) { result.append($0) }
        try await eventually("the batch waiting for the lock") {
            try await database.integers(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'clawrelay:n1:writer' AND wait_event_type = 'Lock'"
            ) == [1]
        }
        #expect(try await database.terminate("clawrelay:n1:writer") == 1)
        try await eventually("the accept's answer") { !result.all.isEmpty }
        try await holder.query("ROLLBACK", logger: database.logger)
        try await holder.close()

        guard case .failure(let error) = result.all[0] else {
            Issue.record("a batch that rolled back was reported as \(result.all[0])")
            return
        }
        #expect(error.code == .connectionLost)
        #expect(try await database.integers("SELECT count(*) FROM messages WHERE client_id = 'blocked'") == [0])
        // The writer reconnects for the next batch.
        #expect(try await writer.accept(request(client: "after")).get().positions == [StreamPosition(stream: "u1", prev: 2, last: 4)])
        await writer.stop()
    }

    /// Reading back by key: this attempt's own commit is fresh with its position, another
    /// attempt's is a duplicate or a mismatch, and nothing stored is unknown.
    @Test func resolvesAcceptsByKey() async throws {
        let database = try await TestDatabase()
        let writer = database.writer(for: NodeIncarnation(node: "n1"))
        let committed = request(client: "m1")
        let acceptance = try await writer.accept(committed).get()
        let retry = request(client: "m1")
        let other = request(client: "m1", content: "other")
        let absent = request(client: "m2")
        let connection = try await database.connect()
        let resolved = try await WriterCalls.resolveAccepts(
            connection,
            [committed, retry, other, absent],
            NodeIncarnation(node: "n1"),
            database.logger
        )
        try await connection.close()

        guard case .fresh(let runID, _, _, let answer, _) = acceptance else { throw FixtureError("not fresh: \(acceptance)") }
        #expect(try resolved[0].get() == acceptance)
        #expect(try resolved[1].get() == .duplicate(.active, runID: runID, answer: answer))
        #expect(try resolved[2].get() == .mismatch)
        #expect(throws: PostgresStoreError.self) { try resolved[3].get() }
        await writer.stop()
    }
}
