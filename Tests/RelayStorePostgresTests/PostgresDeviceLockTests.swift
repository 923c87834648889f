import Foundation
import PostgresNIO
import RelayCore
import Testing

@testable import RelayStorePostgres

/// What SQLite's one writer gave for free and several nodes must get from row locks.
@Suite(.timeLimit(.minutes(1))) struct PostgresDeviceLockTests {
    /// Two nodes pairing with one link at once: the second waits for the first's commit and finds
    /// the link used, so it is honoured once. A third connection holds the link's row until both
    /// nodes are waiting, so they do run at once.
    @Test func aPairingLinkIsHonouredOnceAcrossNodes() async throws {
        let fixture = try await JournalFixture()
        let second = fixture.database.writer(for: NodeIncarnation(node: "n2"))
        let other = PostgresJournal(writer: second, logger: fixture.database.logger) { _, _ in }
        try await fixture.run { connection, logger in
            try await PostgresPairingLinkQueries.addLink(connection, tokenHash: "link", expiresAt: Int64.max, logger: logger)
        }
        let holder = try await fixture.database.connect()
        try await holder.query("BEGIN", logger: fixture.database.logger)
        try await holder.query("SELECT 1 FROM pair_links WHERE token_hash = 'link' FOR UPDATE", logger: fixture.database.logger)

        let verdicts = Recorder<Bool>()
        for (journal, device) in [(fixture.journal, "d1"), (other, "d2")] {
            journal.updateDevice(
                DeviceSnapshot.Request(deviceID: device, pairLinkHash: "link"),
                { snapshot -> Bool in
                    snapshot.consumesPairLink = true
                    if snapshot.pairLinkUsable { snapshot.device = deviceRecord(device) }
                    return snapshot.pairLinkUsable
                },
                completion: { result in if case .success(let usable) = result { verdicts.append(usable) } }
            )
        }
        try await eventually("both nodes wait for the link's row") {
            try await fixture.database.integers(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ) == [2]
        }
        try await holder.query("COMMIT", logger: fixture.database.logger)
        try await holder.close()
        await fixture.settle()
        await awaitingDone { other.barrier($0) }
        #expect(verdicts.all.sorted { !$0 && $1 } == [false, true], "one node paired, the other found the link used")
        #expect(try await fixture.database.integers("SELECT count(*) FROM devices") == [1])
        await second.stop()
        await fixture.stop()
    }
}
