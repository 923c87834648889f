import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// Each node's presence of a device in `device_sessions`, and the most present state over the live nodes.
@Suite(.timeLimit(.minutes(1))) struct PostgresPresenceJournalTests {
    private func register(_ fixture: JournalFixture, _ node: NodeIncarnation, leaseSeconds: Int = 60) async throws {
        try await fixture.database.execute(
            """
            INSERT INTO nodes (node_id, incarnation, started_at, heartbeat_at, expires_at)
            VALUES ('\(node.node)', '\(node.incarnation.uuidString)', now(), now(), now() + interval '\(leaseSeconds) seconds')
            """
        )
    }

    private func presence(_ fixture: JournalFixture, _ device: String) async throws -> DevicePresence.State {
        try await awaiting { fixture.journal.clusterPresence(deviceID: device, completion: $0) }
    }

    @Test func theMostPresentStateOverTwoLiveIncarnationsCounts() async throws {
        let fixture = try await JournalFixture()
        let (one, two) = (NodeIncarnation(node: "n1"), NodeIncarnation(node: "n2"))
        try await register(fixture, one)
        try await register(fixture, two)
        #expect(try await presence(fixture, "phone") == .offline, "no node holds it")
        fixture.journal.recordPresence(deviceID: "phone", on: one, state: .background, now: 1)
        #expect(try await presence(fixture, "phone") == .background)
        fixture.journal.recordPresence(deviceID: "phone", on: two, state: .foreground, now: 2)
        #expect(try await presence(fixture, "phone") == .foreground, "foreground on n2 beats background on n1")
        fixture.journal.recordPresence(deviceID: "phone", on: two, state: .offline, now: 3)
        #expect(try await presence(fixture, "phone") == .background)
        #expect(try await fixture.database.strings("SELECT node_id FROM device_sessions") == ["n1"], "offline leaves no row")
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    @Test func aDeadIncarnationsPresenceIsIgnoredAndGoesWhenItIsBuried() async throws {
        let fixture = try await JournalFixture()
        let (one, two) = (NodeIncarnation(node: "n1"), NodeIncarnation(node: "n2"))
        try await register(fixture, one)
        try await register(fixture, two)
        fixture.journal.recordPresence(deviceID: "phone", on: one, state: .background, now: 1)
        fixture.journal.recordPresence(deviceID: "phone", on: two, state: .foreground, now: 1)
        try await fixture.database.execute("UPDATE nodes SET expires_at = now() - interval '1 second' WHERE node_id = 'n2'")
        #expect(try await presence(fixture, "phone") == .background, "n2's lease lapsed: its foreground counts for nothing")
        try await fixture.database.execute("DELETE FROM nodes WHERE node_id = 'n2'")
        #expect(try await fixture.database.strings("SELECT node_id FROM device_sessions") == ["n1"], "burying n2 took its rows")
        let restarted = NodeIncarnation(node: "n1")
        try await fixture.database.execute("UPDATE nodes SET incarnation = '\(restarted.incarnation.uuidString)' WHERE node_id = 'n1'")
        #expect(try await presence(fixture, "phone") == .offline, "n1's earlier incarnation counts for nothing")
        fixture.journal.recordPresence(deviceID: "phone", on: one, state: .foreground, now: 2)
        #expect(try await presence(fixture, "phone") == .offline, "a replaced incarnation records nothing")
        await fixture.stop()
    }
}
