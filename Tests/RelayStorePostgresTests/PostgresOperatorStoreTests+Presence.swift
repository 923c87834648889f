import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// `clawrelay devices list` in a cluster: a device's presence is its most present state over the
/// live nodes' `device_sessions`, with each node's.
extension PostgresOperatorStoreTests {
    private func register(_ fixture: JournalFixture, _ node: NodeIncarnation, leaseSeconds: Int = 60) async throws {
        try await fixture.database.execute(
            """
            INSERT INTO nodes (node_id, incarnation, started_at, heartbeat_at, expires_at)
            VALUES ('\(node.node)', '\(node.incarnation.uuidString)', now(), now(), now() + interval '\(leaseSeconds) seconds')
            """
        )
    }

    @Test func theDeviceListingTakesEachDevicesMostPresentStateOverTheLiveNodes() async throws {
        let fixture = try await JournalFixture()
        #expect(try await withStore(fixture) { try $0.clusterPresence() } == nil, "no node joined a cluster: the column holds")

        let (one, two, gone) = (NodeIncarnation(node: "n1"), NodeIncarnation(node: "n2"), NodeIncarnation(node: "n3"))
        for node in [one, two, gone] { try await register(fixture, node) }
        for device in ["phone", "tablet", "watch"] { try await fixture.store(deviceRecord(device)) }
        // The column says what the last node to write it saw; a node that died left it there.
        try await fixture.database.execute("UPDATE devices SET presence = 'foreground'")
        fixture.journal.recordPresence(deviceID: "phone", on: one, state: .background, now: 1)
        fixture.journal.recordPresence(deviceID: "phone", on: two, state: .foreground, now: 1)
        fixture.journal.recordPresence(deviceID: "tablet", on: one, state: .background, now: 1)
        fixture.journal.recordPresence(deviceID: "watch", on: gone, state: .foreground, now: 1)
        await awaitingDone { fixture.journal.barrier($0) }
        try await fixture.database.execute("UPDATE nodes SET expires_at = now() - interval '1 second' WHERE node_id = 'n3'")

        let listing = try #require(try await withStore(fixture) { try $0.clusterPresence() })
        #expect(listing["phone"] == ClusterPresence(nodes: ["n1": .background, "n2": .foreground]))
        #expect(listing["phone"]?.state == .foreground, "foreground on n2 beats background on n1")
        #expect(listing["tablet"]?.state == .background && listing["tablet"]?.nodes == ["n1": .background])
        #expect(listing["watch"] == nil, "only a node whose lease lapsed holds it: offline")
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }
}
