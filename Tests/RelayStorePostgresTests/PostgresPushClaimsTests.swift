import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// The pending pushes the nodes of a cluster share (migration 11): one node claims a device's
/// burst, a claim is free again when its holder dies or it lapses or the push is stored again,
/// and stranded ones are found.
@Suite(.timeLimit(.minutes(1))) struct PostgresPushClaimsTests {
    let one = NodeIncarnation(node: "n1")
    let two = NodeIncarnation(node: "n2")

    private func register(_ fixture: JournalFixture, _ nodes: NodeIncarnation...) async throws {
        for node in nodes {
            try await fixture.database.execute(
                """
                INSERT INTO nodes (node_id, incarnation, started_at, heartbeat_at, expires_at)
                VALUES ('\(node.node)', '\(node.incarnation.uuidString)', now(), now(), now() + interval '60 seconds')
                """
            )
        }
    }

    private func push(_ id: String, conversation: String = "c1", lastSeq: Int64 = 1, due: Int64 = 10) -> PendingPush {
        PendingPush(
            id: id,
            deviceID: "phone",
            userID: "ann",
            conversationID: conversation,
            count: 1,
            lastSeq: lastSeq,
            failed: lastSeq == 0,
            text: "answer \(id)",
            runMillis: 0,
            createdAt: 1,
            dueAt: due
        )
    }

    private func claim(
        _ fixture: JournalFixture,
        _ node: NodeIncarnation,
        conversation: String = "c1",
        now: Int64 = 20,
        until: Int64 = 1_000
    )
        async throws -> [String]
    {
        try await awaiting {
            fixture.journal.claimPushes(deviceID: "phone", conversationID: conversation, node: node, now: now, until: until, completion: $0)
        }.map(\.id)
    }

    private func stored(_ fixture: JournalFixture) async throws -> [String] {
        try await fixture.database.strings("SELECT id FROM push_pending ORDER BY id")
    }

    @Test func oneNodeClaimsTheWholeBurstAndOnlyItsClaimIsDeleted() async throws {
        let fixture = try await JournalFixture()
        try await register(fixture, one, two)
        for push in [push("a"), push("b", lastSeq: 2), push("x", conversation: "c2")] { fixture.journal.savePush(push) }
        #expect(try await claim(fixture, one) == ["a", "b"], "both nodes' parts of the burst, not another conversation's")
        #expect(try await claim(fixture, two).isEmpty, "a live node holds them")
        fixture.journal.deleteClaimed(ids: ["a", "b"], node: two)
        #expect(try await stored(fixture) == ["a", "b", "x"], "n2 holds none of them")
        fixture.journal.deleteClaimed(ids: ["a", "b"], node: one)
        #expect(try await stored(fixture) == ["x"])
        #expect(try await claim(fixture, NodeIncarnation(node: "n3"), conversation: "c2").isEmpty, "a node that is not live claims nothing")
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    @Test func aClaimIsFreeAgainWhenItLapsesWhenThePushIsStoredAgainAndWhenItsHolderGoes() async throws {
        let fixture = try await JournalFixture()
        try await register(fixture, one, two)
        fixture.journal.savePush(push("a"))
        #expect(try await claim(fixture, one, now: 20, until: 100) == ["a"])
        #expect(try await claim(fixture, two, now: 100).isEmpty, "held until 100")
        #expect(try await claim(fixture, two, now: 101, until: 500) == ["a"], "lapsed")
        var grown = push("a")
        grown.count = 2
        fixture.journal.savePush(grown)
        fixture.journal.deleteClaimed(ids: ["a"], node: two)
        #expect(try await stored(fixture) == ["a"], "stored again after the claim: not the push n2 sent")
        #expect(try await claim(fixture, one, now: 120, until: 900) == ["a"], "the claim went with the new store")
        try await fixture.database.execute("DELETE FROM nodes WHERE node_id = 'n1'")
        #expect(try await claim(fixture, two, now: 130) == ["a"], "its holder is no longer a live node")
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    @Test func strandedPushesAreFoundOncePerBurstAndAReadCursorDropsNone() async throws {
        let fixture = try await JournalFixture()
        try await register(fixture, one, two)
        for push in [push("a", lastSeq: 5), push("b", lastSeq: 7, due: 12), push("f", lastSeq: 0, due: 11), push("x", conversation: "c2", due: 50)] {
            fixture.journal.savePush(push)
        }
        try await fixture.database.execute("INSERT INTO read_cursors (user_id, conversation_id, seq, updated_ms) VALUES ('ann', 'c1', 6, 1)")
        let stranded = try await awaiting { fixture.journal.strandedPushes(dueBefore: 40, now: 41, limit: 10, completion: $0) }
        #expect(stranded.map(\.id) == ["a"], "the oldest of c1's burst; c2's is not due by 40")
        #expect(try await claim(fixture, one) == ["a", "b", "f"], "the cursor moved by the user's own message is no read")
        let free = try await awaiting { fixture.journal.strandedPushes(dueBefore: 60, now: 61, limit: 10, completion: $0) }
        #expect(free.map(\.id) == ["x"], "n1 holds c1's")
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }
}
