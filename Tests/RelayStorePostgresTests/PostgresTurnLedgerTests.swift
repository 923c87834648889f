import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

@Suite(.timeLimit(.minutes(1))) struct PostgresTurnLedgerTests {
    /// An accept with its node registers the turn for that incarnation in its own transaction; one
    /// without (a single node) leaves the turn out of the ledger.
    @Test func registersTheTurnAtAccept() async throws {
        let database = try await TestDatabase()
        let node = NodeIncarnation(node: "n1")
        let writer = database.writer(for: node)
        let registered = try await acceptedRun(writer, request(client: "m1", node: node))
        let single = try await acceptedRun(writer, request(client: "m2"))
        let connection = try await database.connect()
        let rows = try await connection.query(
            "SELECT run_id, node_id, incarnation, order_seq FROM turns WHERE state = 0 ORDER BY order_seq",
            logger: database.logger
        )
        var turns: [(String, String?, UUID?, Int64)] = []
        for try await row in rows.decode((String, String?, UUID?, Int64).self) { turns.append(row) }
        try await connection.close()
        #expect(turns.map(\.0) == [registered, single])
        #expect(turns[0].1 == "n1" && turns[0].2 == node.incarnation && turns[0].3 == 1)
        #expect(turns[1].1 == nil && turns[1].2 == nil)
        await writer.stop()
    }

    /// Two nodes claim runs of one conversation: one runs at a time, in acceptance order; a claim
    /// again by the runner says running, by another node waiting; a withdrawn run lets the next
    /// run, and its later claim registers it again behind it.
    @Test func runsOneTurnAtATimeInAcceptanceOrder() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "n1", "n2") { nodes in
            let (one, two) = (nodes[0].identity, nodes[1].identity)
            let writer = database.writer(for: one)
            let ledger = PostgresTurnLedger(writer: writer, logger: database.logger)
            var runs: [String] = []
            for (index, node) in [one, two, one, two].enumerated() {
                runs.append(try await acceptedRun(writer, request(client: "m\(index)", node: node)))
            }
            #expect(try await ledger.claim(runs[1], node: two).get() == .waiting)
            #expect(try await ledger.claim(runs[0], node: one).get() == .running)
            #expect(try await ledger.claim(runs[0], node: one).get() == .running)
            #expect(try await ledger.claim(runs[0], node: two).get() == .ended, "node one runs it")
            #expect(try await ledger.claim(runs[1], node: two).get() == .waiting)

            #expect(try await writer.end(TurnEnding(runID: runs[0], .answer(eventID: "a0", content: "ok"))).get().positions.count == 1)
            #expect(try await ledger.claim(runs[0], node: one).get() == .ended)
            #expect(try await ledger.claim(runs[2], node: one).get() == .waiting)
            #expect(try await ledger.claim(runs[1], node: two).get() == .running)

            ledger.withdraw(runID: runs[1])
            #expect(try await ledger.claim(runs[3], node: two).get() == .waiting)
            #expect(try await ledger.claim(runs[2], node: one).get() == .running)
            #expect(try await ledger.claim(runs[1], node: two).get() == .waiting)
            #expect(try await database.integers("SELECT count(*) FROM turns WHERE state = 1") == [1])
            #expect(try await database.integers("SELECT order_seq FROM turns WHERE state = 0 ORDER BY order_seq") == [3, 7])
            await writer.stop()
        }
    }

    /// A node whose lock went is named by the sweep; declaring it dead fails its running turn once
    /// (with an event in its stream), hands its queued turns to the survivor with their stored
    /// messages, and fences it: its late finish and its claims are refused. A second declaration
    /// changes nothing.
    @Test func declaresADeadNodesTurnsFailedOrAdopted() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "doomed", "survivor") { nodes in
            let (doomed, survivor) = (nodes[0].identity, nodes[1].identity)
            let writer = database.writer(for: doomed)
            let ledger = PostgresTurnLedger(writer: writer, logger: database.logger)
            let running = try await acceptedRun(writer, request(client: "m1", node: doomed))
            let attachments = #"[{"id": "a1", "kind": "image"}]"#  // jsonb's own form, as it comes back
            let queued = request(client: "m2", content: "second", attachments: attachments, node: doomed)
            let waiting = try await acceptedRun(writer, queued)
            let other = try await acceptedRun(writer, request(user: "u2", conversation: "c2", client: "m3", content: "third", node: doomed))
            #expect(try await ledger.claim(running, node: doomed).get() == .running)
            #expect(try await nodes[1].sweep() == [])

            #expect(try await database.terminate("clawrelay:doomed:control") == 1)
            try await eventually("the doomed node named dead") { try await nodes[1].sweep() == [doomed] }
            let survivorLedger = PostgresTurnLedger(writer: database.writer(for: survivor), logger: database.logger)
            let dead = try await survivorLedger.declareDead(doomed, survivor: survivor).get()
            #expect(dead.failed.map(\.failure.turn.runID) == [running])
            #expect(dead.failed.map(\.seq) == [5])
            #expect(dead.failed.first?.failure.reason == "the relay node stopped" && dead.failed.first?.failure.userID == "u1")
            #expect(dead.failed.first?.failure.answerID != nil)
            #expect(dead.adopted.map(\.runID) == [other, waiting])  // order_seq 1 (of u2), then 3
            let adopted = try #require(dead.adopted.last)
            #expect(adopted.message.content == "second" && adopted.message.clientID == "m2" && adopted.message.deviceID == "d1")
            #expect(adopted.message.attachmentsJSON == attachments && adopted.message.runID == waiting)
            #expect(adopted.answer == AnswerSlot(id: queued.answerEventID, seq: 4))
            #expect(dead.adopted.first?.message.conversationID == "c2" && dead.adopted.first?.message.userID == "u2")
            #expect(try await database.integers("SELECT state FROM messages ORDER BY answer_seq, stream_id") == [2, 1, 1])
            let events = try await database.integers("SELECT count(*) FROM events")

            let again = try await survivorLedger.declareDead(doomed, survivor: survivor).get()
            #expect(again.failed.isEmpty && again.adopted.isEmpty)
            #expect(try await database.integers("SELECT count(*) FROM events") == events)
            #expect(try await nodes[1].sweep() == [])

            let late = TurnEnding(runID: running, .answer(eventID: "late", content: "too late"))
            #expect(try await writer.end(late).get() == .refused)
            #expect(try await database.integers("SELECT count(*) FROM events") == events)
            #expect(try await ledger.claim(waiting, node: doomed).get() == .ended, "a node declared dead runs nothing more")
            #expect(try await survivorLedger.claim(running, node: survivor).get() == .ended)
            #expect(try await survivorLedger.claim(waiting, node: survivor).get() == .running)
            await writer.stop()
        }
    }

    /// A node that restarts replaces its earlier incarnation's row; register returns that
    /// incarnation, the sweep names it while it owns turns, and declaring it dead hands its queued
    /// turn to the new incarnation.
    @Test func aRestartLeavesTheEarlierIncarnationToDeclareDead() async throws {
        let database = try await TestDatabase()
        let before = PostgresNode(settings: database.settings, identity: NodeIncarnation(node: "n1"), logger: database.logger)
        #expect(try await before.register() == nil)
        let writer = database.writer(for: before.identity)
        let run = try await acceptedRun(writer, request(client: "m1", node: before.identity))
        await before.close()
        let after = PostgresNode(settings: database.settings, identity: NodeIncarnation(node: "n1"), logger: database.logger)
        #expect(try await after.register() == before.identity)
        #expect(try await after.sweep() == [before.identity])
        let ledger = PostgresTurnLedger(writer: writer, logger: database.logger)
        let dead = try await ledger.declareDead(before.identity, survivor: after.identity).get()
        #expect(dead.failed.isEmpty && dead.adopted.map(\.runID) == [run])
        #expect(try await after.sweep() == [])
        #expect(try await ledger.claim(run, node: after.identity).get() == .running)
        await writer.stop()
        await after.close()
    }

    /// Eight nodes each claim their own run of one conversation at once, on eight connections:
    /// never more than one runs, and it is the oldest left.
    @Test func concurrentClaimersOfOneConversationRunOneTurn() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7") { nodes in
            let ledgers = nodes.map { node in
                PostgresTurnLedger(writer: database.writer(for: node.identity), logger: database.logger)
            }
            let accepting = database.writer(for: nodes[0].identity)
            var runs: [String] = []
            for (index, node) in nodes.enumerated() {
                runs.append(try await acceptedRun(accepting, request(client: "m\(index)", node: node.identity)))
            }
            let claimers = zip(ledgers, zip(runs, nodes.map(\.identity))).map { ($0, $1.0, $1.1) }
            for round in 0..<4 {
                let claims = await withTaskGroup(of: (Int, TurnClaim?).self) { group in
                    for index in round..<nodes.count {
                        let (ledger, run, node) = claimers[index]
                        group.addTask { (index, try? await ledger.claim(run, node: node).get()) }
                    }
                    return await group.reduce(into: [Int: TurnClaim?]()) { $0[$1.0] = $1.1 }
                }
                #expect(claims.filter { $0.value == .running }.map(\.key) == [round], "round \(round): \(claims)")
                #expect(try await database.integers("SELECT count(*) FROM turns WHERE state = 1") == [1])
                let writer = database.writer(for: nodes[round].identity)
                #expect(try await writer.end(TurnEnding(runID: runs[round], .answer(eventID: "a\(round)", content: "ok"))).get().positions.count == 1)
                await writer.stop()
            }
            await accepting.stop()
        }
    }
}
