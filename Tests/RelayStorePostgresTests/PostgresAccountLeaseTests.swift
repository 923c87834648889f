import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// Upstream accounts are cluster-wide singletons (migration 7): one live node holds each, a dead
/// holder's accounts go to the next node that asks, and a turn handed to the holder keeps its
/// place in its conversation's order until the holder claims it.
@Suite(.timeLimit(.minutes(1))) struct PostgresAccountLeaseTests {
    @Test func oneLiveNodeHoldsEachAccountUntilItIsDeclaredDead() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "n1", "n2") { nodes in
            let (one, two) = (nodes[0].identity, nodes[1].identity)
            #expect(try await nodes[0].holdAccounts(["gw", "cc"], take: true) == [lease("gw", one), lease("cc", one)])
            let seen = try await nodes[1].holdAccounts(["gw", "cc", "other"], take: true)
            #expect(seen == [lease("gw", one), lease("cc", one), lease("other", two)], "held ones stay; a free one is taken")
            #expect(try await nodes[1].holdAccounts(["fresh"], take: false) == [lease("fresh", nil)], "take: false only reads")
            try await database.withConnection { connection in
                try await connection.query(
                    "INSERT INTO accounts (name, kind, state, detail, updated_ms) VALUES ('gw', 'openclaw', 'connected', '', 1)",
                    logger: database.logger
                )
            }
            #expect(try await nodes[1].holdAccounts(["gw"], take: false).first?.state == .connected, "with the holder's link state")

            #expect(try await database.terminate("clawrelay:n1:control") == 1)
            #expect(try await nodes[1].holdAccounts(["gw"], take: true).map(\.holder) == [one], "still alive until declared dead")
            let writer = database.writer(for: two)
            let ledger = PostgresTurnLedger(writer: writer, logger: database.logger)
            _ = try await ledger.declareDead(one, survivor: two).get()
            #expect(try await nodes[1].holdAccounts(["gw", "cc"], take: false) == [lease("gw", nil), lease("cc", nil)])
            #expect(try await nodes[1].holdAccounts(["gw", "cc"], take: true).map(\.holder) == [two, two])
            await writer.stop()
        }
    }

    /// A reload drops an account from node 1: its next heartbeat lets the lease go (and only its
    /// own), so node 2, configured with it, takes it at its own; dropping them all lets all go.
    @Test func anAccountNoLongerConfiguredIsLetGoAndTakenByAnotherNode() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "n1", "n2") { nodes in
            let (one, two) = (nodes[0].identity, nodes[1].identity)
            let first = try await nodes[0].holdAccounts(["gw", "cc"], take: true)
            #expect(first == [lease("gw", one), lease("cc", one)])
            #expect(try await nodes[1].holdAccounts(["gw", "cc", "own"], take: true).map(\.holder) == [one, one, two])
            #expect(try await nodes[0].holdAccounts(["cc"], take: true) == [lease("cc", one)], "gw was dropped from node 1's config")
            #expect(try await nodes[1].holdAccounts(["gw", "cc", "own"], take: true).map(\.holder) == [two, one, two])
            #expect(try await nodes[0].holdAccounts([], take: true).isEmpty)
            #expect(try await nodes[1].holdAccounts(["gw", "cc", "own"], take: false).map(\.holder) == [two, nil, two], "node 2's leases stay")
            #expect(try await database.strings("SELECT account FROM account_leases ORDER BY account") == ["gw", "own"])
        }
    }

    /// Eight nodes ask for one account at once, on eight connections: one holds it, and every
    /// answer names that one.
    @Test func concurrentNodesAgreeOnOneHolder() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7") { nodes in
            let answers = try await withThrowingTaskGroup(of: [AccountLease].self) { group in
                for node in nodes { group.addTask { try await node.holdAccounts(["gw"], take: true) } }
                return try await group.reduce(into: [[AccountLease]]()) { $0.append($1) }
            }
            let holders = Set(answers.compactMap { $0.first?.holder })
            #expect(answers.count == 8 && holders.count == 1)
            #expect(try await database.integers("SELECT count(*) FROM account_leases") == [1])
        }
    }

    /// Node 1 claims a turn and hands it to node 2 (the holder): the turn behind it waits, node
    /// 2 reads it with its stored message and backend and runs it; a turn node 2 does not own
    /// cannot be handed by it, and a holder that is not a live node is refused without a change.
    @Test func aHandedTurnKeepsItsPlaceUntilTheHolderClaimsIt() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "n1", "n2") { nodes in
            let (one, two) = (nodes[0].identity, nodes[1].identity)
            let writer = database.writer(for: one)
            let first = PostgresTurnLedger(writer: writer, logger: database.logger)
            let holderWriter = database.writer(for: two)
            let holder = PostgresTurnLedger(writer: holderWriter, logger: database.logger)
            let runs = [
                try await acceptedRun(writer, request(client: "m1", content: "for the gateway", node: one)),
                try await acceptedRun(writer, request(client: "m2", node: one)),
            ]
            #expect(try await first.claim(runs[0], node: one).get() == .running)
            let stranger = NodeIncarnation(node: "gone")
            #expect(try await first.handOver(runs[0], from: one, to: stranger).get() == .holderGone)
            #expect(try await database.integers("SELECT count(*) FROM turns WHERE state = 1") == [1], "nothing changed")
            #expect(try await first.handOver(runs[0], from: one, to: two).get() == .handed)
            #expect(try await first.claim(runs[1], node: one).get() == .waiting, "the handed turn keeps its place")

            let handed = try await holder.handedTurns(to: two).get()
            #expect(handed.map(\.runID) == [runs[0]])
            #expect(handed.first?.backend == "gw" && handed.first?.message.content == "for the gateway")
            #expect(handed.first?.message.clientID == "m1" && handed.first?.answer.seq == 2)
            #expect(try await first.handedTurns(to: one).get().isEmpty)
            #expect(try await holder.handOver(runs[1], from: two, to: one).get() == .notOwned)

            #expect(try await holder.claim(runs[0], node: two).get() == .running)
            #expect(try await holder.handedTurns(to: two).get().isEmpty, "a claimed turn is no longer waiting")
            await writer.stop()
            await holderWriter.stop()
        }
    }

    private func lease(_ account: String, _ holder: NodeIncarnation?) -> AccountLease { AccountLease(account: account, holder: holder) }
}

extension PostgresTurnLedger {
    func handOver(_ runID: String, from: NodeIncarnation, to holder: NodeIncarnation) async -> Result<HandOver, any Error> {
        await withCheckedContinuation { continuation in
            handOver(runID: runID, from: from, to: holder, backend: "gw") { continuation.resume(returning: $0) }
        }
    }

    func handedTurns(to node: NodeIncarnation) async -> Result<[AdoptedTurn], any Error> {
        await withCheckedContinuation { continuation in handedTurns(to: node) { continuation.resume(returning: $0) } }
    }
}
