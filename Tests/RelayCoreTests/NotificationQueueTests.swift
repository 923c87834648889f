import RelayCore
import RelayTesting
import Testing

@Suite struct NotificationQueueTests {
    static let queued = MissedDelivery.queue(ttlMillis: 60_000, capacity: 100, scheme: nil)

    @Test func aBackgroundDeviceGetsEveryEventQueuedThenDrainedOnceInOrder() {
        let core = CoreFixture()
        core.connect("phone")
        let (tablet, _) = core.connect("tablet", delivery: Self.queued)
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        for text in ["one", "two"] {
            core.submit(core.message(text, device: "phone"))
            core.emit(.progress("…"), run: core.backend.runs.count - 1)
            core.emit(.final("echo \(text)"), run: core.backend.runs.count - 1)
        }
        #expect(tablet.events.isEmpty, "nothing live while in the background, not even typing or deltas")
        #expect(core.journal.queue(of: "tablet").count == 4, "the queue keeps every event; pushes coalesce, queues do not")

        core.hub.presence.signal(.foregrounded, deviceID: "tablet")
        core.loop.runUntilIdle()
        let contents: [String] = tablet.queued.map { if case .message(let event) = $0.item { event.content } else { "" } }
        #expect(contents == ["one", "echo one", "two", "echo two"])
        let turns: [String?] = tablet.queued.map { if case .message(let event) = $0.item { event.turn?.clientID } else { nil } }
        #expect(turns == ["c_one", "c_one", "c_two", "c_two"], "a queued event knows the message that started its turn")
        #expect(core.journal.queue(of: "tablet").isEmpty, "written entries are deleted")

        core.hub.queue.drain(deviceID: "tablet", to: tablet)
        core.loop.runUntilIdle()
        #expect(tablet.queued.count == 4, "a second drain finds nothing")
    }

    @Test func entriesHandedToASocketThatClosedUnwrittenAreDueAgain() {
        let core = CoreFixture()
        core.connect("phone")
        let (tablet, socket) = core.connect("tablet", delivery: Self.queued)
        tablet.writes = false
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        core.submit(core.message("one", device: "phone"))
        core.hub.presence.signal(.foregrounded, deviceID: "tablet")
        core.loop.runUntilIdle()
        #expect(tablet.queued.count == 1)
        core.hub.detach(tablet, socket: socket, userID: core.user)
        let (again, _) = core.connect("tablet", delivery: Self.queued)
        #expect(again.queued.count == 1, "the new socket gets it")
    }

    @Test func expiredEntriesAreNotDelivered() {
        let core = CoreFixture()
        core.hub.start()
        core.connect("phone")
        let (tablet, _) = core.connect("tablet", delivery: .queue(ttlMillis: 1_000, capacity: 10, scheme: nil))
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        core.submit(core.message("old", device: "phone"))
        core.loop.advance(millis: 61_000)
        #expect(core.journal.queue(of: "tablet").isEmpty, "the sweep purged it")
        core.hub.presence.signal(.foregrounded, deviceID: "tablet")
        core.loop.runUntilIdle()
        #expect(tablet.queued.isEmpty)
    }

    @Test func aFullQueueDropsItsOldestEntries() {
        let core = CoreFixture()
        core.connect("phone")
        core.connect("tablet", delivery: .queue(ttlMillis: 60_000, capacity: 2, scheme: nil))
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        for text in ["a", "b", "c"] {
            core.submit(core.message(text, device: "phone", conversation: core.resolve(.session(text))))
        }
        let kept: [String] = core.journal.queue(of: "tablet").map { if case .message(let event) = $0 { event.content } else { "" } }
        #expect(kept == ["b", "c"])
    }

    @Test func aDeviceReturningBeforeTheCommitGetsTheEventOnceFromItsQueue() {
        let core = CoreFixture()
        core.connect("phone")
        let (tablet, _) = core.connect("tablet", delivery: Self.queued)
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        core.hub.turns.submit(core.message("race", device: "phone"), policy: TurnPolicy()) { _ in }
        core.hub.presence.signal(.foregrounded, deviceID: "tablet")
        core.loop.runUntilIdle()
        let live = tablet.messages.map(\.content)
        let drained: [String] = tablet.queued.map { if case .message(let event) = $0.item { event.content } else { "" } }
        #expect(live + drained == ["race"])
    }

    @Test func aDeviceLeavingBeforeTheCommitGetsTheEventQueued() {
        let core = CoreFixture()
        core.connect("phone")
        let (tablet, _) = core.connect("tablet", delivery: Self.queued)
        core.hub.turns.submit(core.message("race", device: "phone"), policy: TurnPolicy()) { _ in }
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        core.loop.runUntilIdle()
        #expect(tablet.messages.isEmpty)
        #expect(core.journal.queue(of: "tablet").count == 1)
    }

    @Test func failuresAreQueuedWithTheTurnThatFailed() {
        let core = CoreFixture()
        core.connect("phone")
        core.connect("tablet", delivery: Self.queued)
        core.submit(core.message("doomed", device: "tablet", clientID: "req-1"))
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        core.emit(.failed("backend down"), run: 0)
        guard case .failure(let failure)? = core.journal.queue(of: "tablet").first else {
            Issue.record("no failure queued")
            return
        }
        #expect(failure.turn.clientID == "req-1")
        #expect(failure.cause == .failed)
    }

    @Test func replayDevicesKeepNoQueue() {
        let core = CoreFixture()
        core.connect("phone")
        let (laptop, socket) = core.connect("laptop")
        core.hub.detach(laptop, socket: socket, userID: core.user)
        core.submit(core.message("hi", device: "phone"))
        #expect(core.journal.queue(of: "laptop").isEmpty)
    }

    @Test func aForegroundDeviceQueuesTheConversationsItDoesNotListenTo() {
        let core = CoreFixture()
        core.connect("phone")
        let other = core.resolve(.session("other"))
        let (tablet, _) = core.connect("tablet", delivery: Self.queued)
        tablet.listening = [other.id]
        core.submit(core.message("main one", device: "phone"))
        core.submit(core.message("other one", device: "phone", conversation: other))
        #expect(tablet.messages.map(\.content) == ["other one"], "live only where it listens")
        #expect(core.journal.queue(of: "tablet").count == 1)

        tablet.listening = [other.id, core.conversation.id]
        core.hub.queue.drain(deviceID: "tablet", to: tablet)
        core.loop.runUntilIdle()
        let drained: [String] = tablet.queued.map { if case .message(let event) = $0.item { event.content } else { "" } }
        #expect(drained == ["main one"])
    }

    @Test func aDrainHandsOutOnlyTheListenedConversationsAndKeepsTheRest() {
        let core = CoreFixture()
        core.connect("phone")
        let other = core.resolve(.session("other"))
        let (tablet, _) = core.connect("tablet", delivery: Self.queued)
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        core.submit(core.message("for other", device: "phone", conversation: other))
        core.submit(core.message("for main", device: "phone"))
        tablet.listening = [core.conversation.id]
        core.hub.presence.signal(.foregrounded, deviceID: "tablet")
        core.loop.runUntilIdle()
        #expect(tablet.queued.count == 1)
        tablet.listening = [other.id]
        core.hub.queue.drain(deviceID: "tablet", to: tablet)
        core.loop.runUntilIdle()
        let drained: [String] = tablet.queued.map { if case .message(let event) = $0.item { event.content } else { "" } }
        #expect(drained == ["for main", "for other"], "an entry older than one handed out is not skipped")
    }

    @Test func aDeviceFollowingOneSchemeQueuesOnlyConversationsNamedInIt() {
        let core = CoreFixture()
        core.connect("phone")
        let project = core.resolve(ConversationKey("companion", "s-1"))
        core.connect("tablet", delivery: .queue(ttlMillis: 60_000, capacity: 10, scheme: "companion"))
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        core.submit(core.message("timeline", device: "phone"))
        core.submit(core.message("project", device: "phone", conversation: project))
        let queued: [String] = core.journal.queue(of: "tablet").map { if case .message(let event) = $0 { event.content } else { "" } }
        #expect(queued == ["project"])
    }

    @Test func aDrainReadBeforeAnEarlierDrainsDeleteCommittedDoesNotHandItOutAgain() {
        let core = CoreFixture()
        core.connect("phone")
        let (tablet, _) = core.connect("tablet", delivery: Self.queued)
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        core.submit(core.message("once", device: "phone"))
        tablet.writes = false
        core.hub.queue.drain(deviceID: "tablet", to: tablet)
        core.loop.runUntilIdle()
        #expect(tablet.queued.count == 1)
        core.hub.queue.drain(deviceID: "tablet", to: tablet)  // its read is submitted now,
        tablet.flushWrites()  // and the first drain's delete only after it
        core.loop.runUntilIdle()
        #expect(tablet.queued.count == 1, "the second drain must not deliver it again")
        #expect(core.journal.queue(of: "tablet").isEmpty)
        core.hub.queue.drain(deviceID: "tablet", to: tablet)
        core.loop.runUntilIdle()
        #expect(tablet.queued.count == 1)
    }
}
