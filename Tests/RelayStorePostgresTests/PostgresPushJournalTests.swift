import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// The PostgreSQL journal's push targets, pending pushes and attempts, as the SQLite store keeps them.
@Suite(.timeLimit(.minutes(1))) struct PostgresPushJournalTests {
    private func save(_ fixture: JournalFixture, _ device: String, _ kind: PushTarget.Kind, _ token: String, at millis: Int64) async throws {
        try await awaiting { fixture.journal.savePushTarget(deviceID: device, kind: kind, token: token, platform: "ios", at: millis, completion: $0) }
    }

    private func pushDevice(_ fixture: JournalFixture, _ id: String) async throws -> PushDevice? {
        try await awaiting { fixture.journal.pushDevice(id, completion: $0) }
    }

    @Test func targetsAreSavedReplacedAndListedForApprovedDevicesOnly() async throws {
        let fixture = try await JournalFixture()
        try await fixture.store(deviceRecord("phone", user: "ann", protocolName: "clawline"))
        try await fixture.store(deviceRecord("mac", user: "bob"))
        var revoked = deviceRecord("old")
        revoked.status = .revoked
        try await fixture.store(revoked)
        try await save(fixture, "phone", .ntfy, "https://ntfy.sh/topic", at: 10)
        try await save(fixture, "phone", .apns, "aa", at: 11)
        try await save(fixture, "mac", .apns, "bb", at: 12)
        try await save(fixture, "old", .apns, "cc", at: 13)
        try await save(fixture, "phone", .apns, "dd", at: 14)
        let devices = try await awaiting { fixture.journal.pushDevices(completion: $0) }
        #expect(
            devices == [
                PushDevice(
                    deviceID: "mac",
                    userID: "bob",
                    protocolName: "gateway",
                    targets: [PushTarget(deviceID: "mac", kind: .apns, token: "bb", registeredAt: 12)]
                ),
                PushDevice(
                    deviceID: "phone",
                    userID: "ann",
                    protocolName: "clawline",
                    targets: [
                        PushTarget(deviceID: "phone", kind: .apns, token: "dd", registeredAt: 14),
                        PushTarget(deviceID: "phone", kind: .ntfy, token: "https://ntfy.sh/topic", registeredAt: 10),
                    ]
                ),
            ],
            "one target per kind, the newest; a revoked device is left out"
        )
        #expect(try await pushDevice(fixture, "phone") == devices[1])
        #expect(try await pushDevice(fixture, "old") == nil)
        #expect(try await pushDevice(fixture, "nobody") == nil)
        await fixture.stop()
    }

    @Test func aRetiredTargetIsLeftOutUnlessRegisteredAfterAndComesBackWhenSavedAgain() async throws {
        let fixture = try await JournalFixture()
        try await fixture.store(deviceRecord("phone"))
        try await save(fixture, "phone", .apns, "aa", at: 10)
        let first = PushTarget(deviceID: "phone", kind: .apns, token: "aa", registeredAt: 10)
        fixture.journal.retire(first, reason: "Unregistered", at: 20)
        #expect(try await pushDevice(fixture, "phone") == nil, "retired")
        #expect(try await fixture.database.integers("SELECT retired_ms FROM push_targets") == [20])

        try await save(fixture, "phone", .apns, "aa", at: 30)
        #expect(try await pushDevice(fixture, "phone")?.targets == [PushTarget(deviceID: "phone", kind: .apns, token: "aa", registeredAt: 30)])
        fixture.journal.retire(first, reason: "Unregistered", at: 40)
        #expect(try await pushDevice(fixture, "phone") != nil, "registered again after the verdict's target: it stays")
        try await save(fixture, "phone", .apns, "bb", at: 5)
        fixture.journal.retire(PushTarget(deviceID: "phone", kind: .apns, token: "aa", registeredAt: 50), reason: "BadDeviceToken", at: 50)
        #expect(try await pushDevice(fixture, "phone") != nil, "another token: it stays")
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    @Test func pendingPushesAreSavedUpdatedListedByDueTimeAndDeleted() async throws {
        let fixture = try await JournalFixture()
        let later = PendingPush(
            id: "p1",
            deviceID: "phone",
            userID: "ann",
            conversationID: "c1",
            count: 1,
            lastSeq: 7,
            failed: false,
            text: "hello ✓",
            runMillis: 1_500,
            createdAt: 100,
            dueAt: 300
        )
        let sooner = PendingPush(
            id: "p2",
            deviceID: "mac",
            userID: "bob",
            conversationID: "c2",
            count: 1,
            lastSeq: 0,
            failed: true,
            text: "the turn failed",
            runMillis: 0,
            createdAt: 150,
            dueAt: 200
        )
        fixture.journal.savePush(later)
        fixture.journal.savePush(sooner)
        var coalesced = later
        coalesced.count = 3
        coalesced.lastSeq = 9
        coalesced.text = "newest"
        coalesced.runMillis = 2_000
        coalesced.dueAt = 400
        var moved = coalesced
        moved.userID = "someone else"
        moved.createdAt = 999
        fixture.journal.savePush(moved)
        #expect(
            try await awaiting { fixture.journal.pendingPushes(completion: $0) } == [sooner, coalesced],
            "an update keeps its owner and creation"
        )
        fixture.journal.deletePush(id: "p2")
        fixture.journal.deletePush(id: "unknown")
        #expect(try await awaiting { fixture.journal.pendingPushes(completion: $0) } == [coalesced])
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    @Test func attemptsAreRecordedInOrderWithTheirUserAndTheOldestDropped() async throws {
        let fixture = try await JournalFixture()
        let sent = PushAttempt(
            timeMillis: 10,
            deviceID: "phone",
            conversationID: "c1",
            sink: "apns",
            target: "apns:…9f3a",
            status: 200,
            outcome: .sent,
            reason: ""
        )
        let failed = PushAttempt(
            timeMillis: 11,
            deviceID: "phone",
            conversationID: "c1",
            sink: "webhook:example.com",
            target: "webhook",
            status: 0,
            outcome: .retrying,
            reason: "timed out"
        )
        fixture.journal.record([sent, failed], userID: "ann")
        fixture.journal.record([], userID: "ann")
        fixture.journal.record([sent], userID: nil)
        let attempts = try await fixture.run { connection, logger in try await PostgresPushQueries.attempts(connection, logger: logger) }
        #expect(attempts.map(\.attempt) == [sent, failed, sent])
        #expect(attempts.map(\.userID) == ["ann", "ann", nil])
        #expect(attempts.map(\.id) == attempts.map(\.id).sorted())

        try await fixture.run { connection, logger in
            try await PostgresPushQueries.record(connection, [failed], userID: "bob", keep: 2, logger: logger)
        }
        let kept = try await fixture.run { connection, logger in try await PostgresPushQueries.attempts(connection, logger: logger) }
        #expect(kept.map(\.attempt) == [sent, failed] && kept.map(\.userID) == [nil, "bob"], "only the newest `keep` stay")
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }
}
