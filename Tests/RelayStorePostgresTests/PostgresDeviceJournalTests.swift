import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// The PostgreSQL journal's devices, as the SQLite store promises them (DeviceJournalStoreTests):
/// a snapshot read, changed by a pure function and stored in one transaction; reads of it.
@Suite(.timeLimit(.minutes(1))) struct PostgresDeviceJournalTests {
    @Test func aDeviceIsStoredAndReadBackWithEveryField() async throws {
        let fixture = try await JournalFixture()
        var record = DeviceRecord(
            id: "d1",
            userID: "u1",
            protocolName: "gateway",
            claimedName: "Ann's Mac",
            deviceInfoJSON: #"{"os":"macOS","é":1}"#,
            isAdmin: true,
            status: .approved,
            tokenHash: "hash",
            tokenDelivered: true,
            createdAt: 1_700_000_000_123,
            lastSeenAt: 1_700_000_000_456
        )
        record.publicKey = "key"
        record.roles = ["operator", "node"]
        record.scopes = ["operator.read", "operator.write"]
        try await fixture.store(record)
        #expect(try await fixture.device("d1") == record)
        #expect(try await fixture.device("nobody") == nil)
        #expect(try await fixture.database.integers("SELECT created_ms FROM users WHERE id = 'u1'") == [1_700_000_000_123], "its user is stored")

        var changed = record
        changed.status = .revoked
        changed.claimedName = nil
        changed.scopes = []
        changed.lastSeenAt = nil
        try await fixture.store(changed)
        #expect(try await fixture.device("d1") == changed, "storing again replaces every field")

        var orphan = deviceRecord("d2", user: "")
        orphan.status = .revoked
        try await fixture.store(orphan)
        #expect(try await fixture.database.integers("SELECT count(*) FROM users") == [1], "a device of no user adds none")
        await fixture.stop()
    }

    @Test func aChangeStoresTheRecordTokensAndBotsAndTakesOutRemovedOnes() async throws {
        let fixture = try await JournalFixture()
        let first = try await fixture.update(DeviceSnapshot.Request(deviceID: "d1", adminExists: true)) { snapshot -> Bool in
            let hadAdmin = snapshot.adminExists
            snapshot.device = deviceRecord("d1", admin: true)
            snapshot.tokens["operator"] = DeviceToken(deviceID: "d1", role: "operator", tokenHash: "h1", scopes: ["operator.read"], issuedAt: 5)
            snapshot.tokens["node"] = DeviceToken(deviceID: "d1", role: "node", tokenHash: nil, scopes: [], issuedAt: 6, revokedAt: 7)
            snapshot.bots["echo"] = "b1"
            snapshot.bots["other"] = "b2"
            return hadAdmin
        }
        #expect(first == false)
        let second = try await fixture.update(DeviceSnapshot.Request(deviceID: "d1", adminExists: true)) { snapshot -> DeviceSnapshot in
            let seen = snapshot
            snapshot.tokens.removeValue(forKey: "operator")
            snapshot.bots.removeValue(forKey: "echo")
            snapshot.bots["other"] = "b3"
            return seen
        }
        #expect(second.adminExists && second.device?.isAdmin == true)
        #expect(second.tokens["operator"] == DeviceToken(deviceID: "d1", role: "operator", tokenHash: "h1", scopes: ["operator.read"], issuedAt: 5))
        #expect(second.tokens["node"] == DeviceToken(deviceID: "d1", role: "node", tokenHash: nil, scopes: [], issuedAt: 6, revokedAt: 7))
        #expect(second.bots == ["echo": "b1", "other": "b2"])
        let third = try await fixture.update(DeviceSnapshot.Request(deviceID: "d1")) { $0 }
        #expect(Array(third.tokens.keys) == ["node"] && third.bots == ["other": "b3"], "roles and bots taken out are deleted, changed ones stored")
        #expect(third.adminExists == false, "not read unless asked")
        await fixture.stop()
    }

    @Test func aThrowingChangeWritesNothing() async throws {
        let fixture = try await JournalFixture()
        try await fixture.store(deviceRecord("d1"))
        await #expect(throws: Refused.self) {
            try await fixture.update(DeviceSnapshot.Request(deviceID: "d1")) { snapshot -> Void in
                snapshot.device?.claimedName = "changed"
                snapshot.tokens["operator"] = DeviceToken(deviceID: "d1", role: "operator", tokenHash: "h", scopes: [], issuedAt: 1)
                snapshot.bots["echo"] = "b"
                throw Refused()
            }
        }
        await #expect(throws: Refused.self) {
            try await fixture.update(DeviceSnapshot.Request(deviceID: "d2")) { snapshot -> Void in
                snapshot.device = deviceRecord("d2")
                throw Refused()
            }
        }
        #expect(try await fixture.device("d1") == deviceRecord("d1"))
        #expect(try await fixture.device("d2") == nil)
        let snapshot = try await fixture.update(DeviceSnapshot.Request(deviceID: "d1")) { $0 }
        #expect(snapshot.tokens.isEmpty && snapshot.bots.isEmpty)
        await fixture.stop()
    }

    /// The change's writes are one transaction: a write the database refuses undoes the ones before it.
    @Test func aRefusedWriteUndoesTheChangesWholeWrite() async throws {
        let fixture = try await JournalFixture()
        await #expect(throws: PostgresStoreError.self) {
            try await fixture.update(DeviceSnapshot.Request(deviceID: "d1")) { snapshot in
                snapshot.device = deviceRecord("d1")
                // PostgreSQL refuses a NUL character in text.
                snapshot.tokens["operator"] = DeviceToken(deviceID: "d1", role: "operator", tokenHash: "bad\u{0}", scopes: [], issuedAt: 1)
            }
        }
        #expect(try await fixture.device("d1") == nil)
        await fixture.stop()
    }

    @Test func aPairingLinkIsUsableOnceAndOnlyConsumedWhenAsked() async throws {
        let fixture = try await JournalFixture()
        try await fixture.run { connection, logger in
            try await PostgresPairingLinkQueries.addLink(connection, tokenHash: "link", expiresAt: Int64.max, logger: logger)
            try await PostgresPairingLinkQueries.addLink(connection, tokenHash: "expired", expiresAt: 1, logger: logger)
        }
        let request = DeviceSnapshot.Request(deviceID: "d3", pairLinkHash: "link")
        #expect(try await fixture.update(request) { $0.pairLinkUsable }, "reading does not use it")
        #expect(try await fixture.update(request) { $0.pairLinkUsable }, "nor does a change that does not ask")
        let consumed = try await fixture.update(request) { snapshot -> Bool in
            snapshot.consumesPairLink = true
            return snapshot.pairLinkUsable
        }
        #expect(consumed)
        #expect(try await fixture.update(request) { $0.pairLinkUsable } == false, "used once")
        #expect(try await fixture.update(DeviceSnapshot.Request(deviceID: "d3", pairLinkHash: "expired")) { $0.pairLinkUsable } == false)
        #expect(try await fixture.update(DeviceSnapshot.Request(deviceID: "d3", pairLinkHash: "unknown")) { $0.pairLinkUsable } == false)
        await fixture.stop()
    }

    @Test func approvedDevicesOfAUserAreCountedByProtocol() async throws {
        let fixture = try await JournalFixture()
        for id in ["a", "b"] { try await fixture.store(deviceRecord(id)) }
        try await fixture.store(deviceRecord("c", protocolName: "clawline"))
        try await fixture.store(deviceRecord("d", user: "other"))
        var revoked = deviceRecord("e")
        revoked.status = .revoked
        try await fixture.store(revoked)
        let request = DeviceSnapshot.Request(deviceID: "f", countDevicesOf: DeviceSnapshot.UserDevices(userID: "u", protocolName: "gateway"))
        #expect(try await fixture.update(request) { $0.userDeviceCount } == 2)
        await fixture.stop()
    }

    @Test func devicesAreListedOldestFirstAllOrOfOneProtocol() async throws {
        let fixture = try await JournalFixture()
        try await fixture.store(deviceRecord("late", protocolName: "clawline", createdAt: 30))
        try await fixture.store(deviceRecord("early", createdAt: 10))
        try await fixture.store(deviceRecord("middle", protocolName: "clawline", createdAt: 20))
        try await fixture.store(deviceRecord("also-early", createdAt: 10))
        let all = try await awaiting { fixture.journal.devices(protocolName: nil, completion: $0) }
        #expect(all.map(\.id) == ["also-early", "early", "middle", "late"], "by creation, then id")
        let clawline = try await awaiting { fixture.journal.devices(protocolName: "clawline", completion: $0) }
        #expect(clawline.map(\.id) == ["middle", "late"])
        let preloaded = try await fixture.run { connection, logger in try await PostgresDeviceQueries.all(connection, logger: logger) }
        #expect(preloaded == all)
        await fixture.stop()
    }

    @Test func lastSeenIsRecordedForKnownDevices() async throws {
        let fixture = try await JournalFixture()
        try await fixture.store(deviceRecord("a"))
        try await fixture.store(deviceRecord("b"))
        fixture.journal.recordSeen(["a": 100, "b": 200, "unknown": 300])
        fixture.journal.recordSeen(["a": 150])
        await fixture.settle()
        #expect(try await fixture.device("a")?.lastSeenAt == 150)
        #expect(try await fixture.device("b")?.lastSeenAt == 200)
        #expect(try await fixture.device("unknown") == nil)
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    @Test func presenceIsSetAndResetAtStart() async throws {
        let fixture = try await JournalFixture()
        try await fixture.store(deviceRecord("a"))
        try await fixture.store(deviceRecord("b"))
        #expect(try await fixture.device("a")?.presence == "offline", "a new device is offline")
        try await fixture.run { connection, logger in
            try await PostgresDeviceQueries.setPresence(connection, deviceID: "a", .foreground, at: 10, logger: logger)
            try await PostgresDeviceQueries.setPresence(connection, deviceID: "b", .background, at: 20, logger: logger)
        }
        #expect(try await fixture.device("a")?.presence == "foreground")
        #expect(try await fixture.device("b")?.presence == "background")
        #expect(try await fixture.database.integers("SELECT presence_ms FROM devices ORDER BY id") == [10, 20])
        try await fixture.store(deviceRecord("a", createdAt: 2))
        #expect(try await fixture.device("a")?.presence == "foreground", "storing the record keeps its presence")
        try await fixture.run { connection, logger in try await PostgresDeviceQueries.resetPresence(connection, logger: logger) }
        let devices = try await fixture.run { connection, logger in try await PostgresDeviceQueries.all(connection, logger: logger) }
        #expect(devices.map(\.presence) == ["offline", "offline"])
        await fixture.stop()
    }

    @Test func pendingPairingsAreMirroredReplacedAndRemovedByProtocol() async throws {
        let fixture = try await JournalFixture()
        let phone = PendingPairing(deviceID: "phone", claimedName: "Ann's iPhone", deviceInfoJSON: #"{"model":"15"}"#, createdAt: 10, expiresAt: 100)
        let mac = PendingPairing(
            protocolName: "gateway",
            requestID: "r1",
            deviceID: "mac",
            claimedName: nil,
            deviceInfoJSON: nil,
            reason: "scope-upgrade",
            createdAt: 5,
            expiresAt: 50
        )
        fixture.journal.savePendingPairing(phone)
        fixture.journal.savePendingPairing(mac)
        var renewed = phone
        renewed.expiresAt = 200
        fixture.journal.savePendingPairing(renewed)
        let pending = {
            try await fixture.run { connection, logger in try await PostgresOperatorQueries.pendingPairings(connection, logger: logger) }
        }
        #expect(try await pending() == [mac, renewed], "oldest first; a new request of a device replaces its row")
        fixture.journal.removePendingPairing(deviceID: "mac", protocolName: "clawline")
        #expect(try await pending() == [mac, renewed], "another protocol's request stays")
        fixture.journal.removePendingPairing(deviceID: "mac", protocolName: "gateway")
        #expect(try await pending() == [renewed])
        try await fixture.run { connection, logger in try await PostgresOperatorQueries.clearPending(connection, logger: logger) }
        #expect(try await pending().isEmpty)
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }
}
