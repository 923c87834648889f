import Logging
import RelayCore
import RelayTesting
import Synchronization
import Testing

@Suite struct PairingRequestsTests {
    let core = CoreFixture()
    var pairing: PairingRequests { core.hub.devices.pairing }

    func draft(_ device: String, protocolName: String = "clawline", address: String = "10.0.0.1", key: String = "k") -> PairingRequests.Request {
        PairingRequests.Request(
            deviceID: device,
            protocolName: protocolName,
            claimedName: "phone",
            info: .object(["key": .string(key)]),
            remoteAddress: address
        )
    }

    @Test func aRequestIsMirroredUntilItExpiresAndItsProtocolHearsIt() {
        var events: [PairingRequests.Event] = []
        pairing.observe { events.append($0) }
        guard case .added(let added) = pairing.admit(draft("d1"), ttlMillis: 1_000, capacity: 10) else {
            Issue.record("not added")
            return
        }
        #expect(core.journal.pendingPairings["clawline|d1"]?.requestID == added.requestID)
        #expect(added.expiresAt == added.createdAt + 1_000)
        core.loop.advance(millis: 999)
        #expect(pairing.request(deviceID: "d1", protocolName: "clawline") != nil)
        core.loop.advance(millis: 1)
        #expect(pairing.requests().isEmpty && core.journal.pendingPairings.isEmpty)
        #expect(events == [.added(added), .expired(added)])
    }

    @Test func oneRequestPerDeviceTheSameOneStaysAnotherReplacesIt() {
        guard case .added(let first) = pairing.admit(draft("d1", key: "k1"), ttlMillis: 1_000, capacity: 10) else {
            Issue.record("not added")
            return
        }
        let again = draft("d1", key: "k1")
        #expect(pairing.admit(again, ttlMillis: 1_000, capacity: 10, isSame: { $0.info == again.info }) == .pending(first))
        let other = draft("d1", key: "k2")
        guard case .added(let second) = pairing.admit(other, ttlMillis: 1_000, capacity: 10, isSame: { $0.info == other.info }) else {
            Issue.record("not replaced")
            return
        }
        #expect(second.requestID != first.requestID)
        #expect(pairing.requests().map(\.requestID) == [second.requestID] && core.journal.pendingPairings.count == 1)
    }

    @Test func capacityIsPerProtocolAndPerAddress() {
        #expect(pairing.admit(draft("a"), ttlMillis: 1_000, capacity: 2, perAddress: 1) != .full)
        #expect(pairing.admit(draft("b"), ttlMillis: 1_000, capacity: 2, perAddress: 1) == .full, "one per address")
        #expect(pairing.admit(draft("b", address: "10.0.0.2"), ttlMillis: 1_000, capacity: 2, perAddress: 1) != .full)
        #expect(pairing.admit(draft("c", address: "10.0.0.3"), ttlMillis: 1_000, capacity: 2) == .full, "two in all")
        #expect(pairing.admit(draft("c", protocolName: "gateway"), ttlMillis: 1_000, capacity: 2) != .full, "another protocol's book")
    }

    @Test func aDecisionGoesToItsProtocolsDeciderByRequestOrDeviceID() {
        var decided: [(String, PairingRequests.Decision)] = []
        pairing.decide(for: "clawline") { request, decision, completion in
            decided.append((request.deviceID, decision))
            completion(decision.approves ? "approved" : "denied")
        }
        guard case .added(let request) = pairing.admit(draft("d1"), ttlMillis: 1_000, capacity: 10) else {
            Issue.record("not added")
            return
        }
        _ = pairing.admit(draft("d2"), ttlMillis: 1_000, capacity: 10)
        var outcomes: [String] = []
        #expect(pairing.decide(request.requestID, approve: true, userID: "u1") { outcomes.append($0) })
        #expect(pairing.decide("d2", approve: false, userID: nil) { outcomes.append($0) })
        #expect(!pairing.decide("d2", approve: true, userID: nil) { outcomes.append($0) }, "decided already")
        #expect(outcomes == ["approved", "denied"])
        #expect(decided.map(\.0) == ["d1", "d2"] && decided.map(\.1) == [.approve(userID: "u1"), .deny])
        #expect(core.journal.pendingPairings.isEmpty && core.loop.pendingTimers == 0, "no expiry left behind")
    }
}

@Suite struct DevicesTests {
    let core = CoreFixture()

    @Test func lastSeenIsWrittenOncePerDeviceAndInterval() {
        core.journal.devices["d1"] = DeviceRecord(
            id: "d1",
            userID: "u",
            claimedName: nil,
            deviceInfoJSON: nil,
            isAdmin: false,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: true,
            createdAt: 0,
            lastSeenAt: nil
        )
        core.hub.devices.seen("d1")
        let first = core.loop.clock.nowMillis()
        #expect(core.journal.devices["d1"]?.lastSeenAt == first, "the first sighting is written at once")
        core.loop.advance(millis: 400)
        core.hub.devices.seen("d1")
        core.loop.advance(millis: 100)
        core.hub.devices.seen("d1")
        #expect(core.journal.devices["d1"]?.lastSeenAt == first, "later ones wait for the interval")
        core.loop.advance(millis: 900)
        #expect(core.journal.devices["d1"]?.lastSeenAt == first + 500, "then the newest is written, once")
        core.loop.advance(millis: 2_000)
        core.hub.devices.seen("d1")
        #expect(core.journal.devices["d1"]?.lastSeenAt == core.loop.clock.nowMillis(), "a sighting after a quiet interval is written at once")
    }

    @Test func anOperatorRefreshRereadsTheDeviceForEveryBridge() {
        var heard: [DeviceEvent] = []
        core.hub.devices.observe { heard.append($0) }
        var record = DeviceRecord(
            id: "d1",
            userID: "u",
            claimedName: nil,
            deviceInfoJSON: nil,
            isAdmin: true,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: true,
            createdAt: 0,
            lastSeenAt: nil
        )
        core.journal.devices["d1"] = record
        core.hub.devices.refresh("d1")
        core.hub.devices.cutOff("d2")
        core.loop.runUntilIdle()
        record.presence = "offline"
        #expect(heard == [.cutOff(deviceID: "d2"), .changed(record)])
    }
}

@Suite struct TurnSinksTests {
    @Test func aTurnHearsItsEventsUntilItEndsAndACancelledOneNothing() {
        let heard = Mutex<[String]>([])
        var sinks = TurnSinks()
        sinks.add("a") { event in heard.withLock { $0.append("a:\(event)") } }
        sinks.add("b") { event in heard.withLock { $0.append("b:\(event)") } }
        sinks.emit(.progress("x"), to: "a")
        sinks.emit(.final("done"), to: "a")
        sinks.emit(.progress("late"), to: "a")
        sinks.remove("b")
        sinks.emit(.final("b"), to: "b")
        #expect(heard.withLock { $0 } == ["a:progress(\"x\")", "a:final(\"done\")"])
        #expect(sinks.isEmpty)
    }

    @Test func failAllFailsEveryTurnStillReportingOnce() {
        let heard = Mutex<[TurnEvent]>([])
        var sinks = TurnSinks()
        for id in ["a", "b"] { sinks.add(id) { event in heard.withLock { $0.append(event) } } }
        sinks.failAll("the link dropped")
        sinks.failAll("again")
        #expect(heard.withLock { $0 } == [.failed("the link dropped"), .failed("the link dropped")])
    }
}
