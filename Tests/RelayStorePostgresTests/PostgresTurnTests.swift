import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

@Suite(.timeLimit(.minutes(1))) struct PostgresTurnTests {
    /// Eight writers (eight connections) of live nodes claim one conversation at once, many
    /// rounds: exactly one wins each time, and always the oldest queued turn.
    @Test func claimsOneRunnerPerConversation() async throws {
        let database = try await TestDatabase()
        let node = try await registeredNodes(database, "n1")[0]
        let writers = (0..<8).map { _ in database.writer(for: node.identity) }
        var accepted: [String] = []
        for index in 0..<5 { accepted.append(try await acceptedRun(writers[0], request(client: "m\(index)"))) }
        for round in 0..<5 {
            let results = await withTaskGroup(of: ClaimResult?.self) { group in
                for writer in writers { group.addTask { try? await writer.claim("c1").get() } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let claimed = results.compactMap { if case .claimed(let run, _) = $0 { run } else { nil } }
            #expect(claimed == [accepted[round]], "round \(round): \(results)")
            #expect(results.filter { $0 == .notClaimed }.count == writers.count - 1)
            if round == 0 {
                // Whatever a claimer does, the index refuses a second running turn.
                await #expect(throws: (any Error).self) {
                    try await database.integers("UPDATE turns SET state = 1 WHERE run_id = '\(accepted[1])' RETURNING 1")
                }
            }
            let answer = TurnEnding(runID: accepted[round], .answer(eventID: "answer-\(round)", content: "done"))
            #expect(try await writers[round].end(answer).get().positions.count == 1)
        }
        for writer in writers { await writer.stop() }
        await node.close()
    }

    /// Claims come in acceptance order, one at a time: the next only once the running one ended.
    @Test func claimsInOrderAsEachTurnEnds() async throws {
        let database = try await TestDatabase()
        let node = try await registeredNodes(database, "n1")[0]
        let writer = database.writer(for: node.identity)
        var seqs: [Int64] = []
        var runs: [String] = []
        for index in 0..<3 {
            let acceptance = try await writer.accept(request(client: "m\(index)")).get()
            guard case .fresh(let run, _, let seq, _, _) = acceptance else { throw FixtureError("not fresh: \(acceptance)") }
            (runs, seqs) = (runs + [run], seqs + [seq])
        }
        for (index, run) in runs.enumerated() {
            #expect(try await writer.claim("c1").get() == .claimed(runID: run, orderSeq: seqs[index]))
            #expect(try await writer.claim("c1").get() == .notClaimed)
            let end: TurnEnding.Outcome =
                index == 1 ? .failure(reason: "backend failed", aborted: false) : .answer(eventID: "a\(index)", content: "ok")
            let written = try await writer.end(TurnEnding(runID: run, end)).get()
            #expect(written == .done(StreamPosition(stream: "u1", prev: Int64(6 + index), last: Int64(7 + index))))
        }
        #expect(try await writer.claim("c1").get() == .notClaimed)
        #expect(try await database.integers("SELECT state FROM turns ORDER BY order_seq") == [2, 3, 2])
        #expect(try await database.integers("SELECT state FROM messages ORDER BY answer_seq") == [0, 2, 0])
        await writer.stop()
        await node.close()
    }

    /// A node whose lease lapsed (frozen, its session still open) is named dead by the sweep, which
    /// changes nothing; once declared dead, its next heartbeat finds itself fenced.
    @Test func fencesANodeWhoseLeaseLapsed() async throws {
        let database = try await TestDatabase()
        let nodes = try await registeredNodes(database, "frozen", "survivor")
        let (frozen, survivor) = (nodes[0], nodes[1])
        #expect(try await frozen.heartbeat())
        _ = try await database.integers("UPDATE nodes SET expires_at = now() - interval '1 second' WHERE node_id = 'frozen' RETURNING 1")
        #expect(try await survivor.sweep() == [frozen.identity])
        #expect(try await survivor.sweep() == [frozen.identity])
        let writer = database.writer(for: survivor.identity)
        let ledger = PostgresTurnLedger(writer: writer, logger: database.logger)
        _ = try await ledger.declareDead(frozen.identity, survivor: survivor.identity).get()
        #expect(try await survivor.sweep() == [])
        #expect(try await frozen.heartbeat() == false)
        await #expect(throws: PostgresStoreError.self) { try await frozen.register() }
        #expect(try await survivor.heartbeat())
        await writer.stop()
        for node in nodes { await node.close() }
    }
}
