import RelayCore
import RelayTesting
import Testing

/// A reload replaces backends in the core's registry: what runs stays where it started, what
/// waits goes to the new backend, and the old one hears when it may let go.
@Suite struct BackendSwapTests {
    @Test func aRunningTurnFinishesOnTheOldBackendAndTheQueuedOneRunsOnTheNew() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("one", device: "phone"))
        core.submit(core.message("two", device: "phone"))
        #expect(core.backend.runs.map(\.request.text) == ["one"])
        let replacement = ScriptedBackend(name: "scripted")
        let dropped = core.hub.router.replace(with: [replacement, core.other])
        #expect(dropped.count == 1 && dropped.first === core.backend)
        var idle = false
        core.hub.turns.whenIdle(core.backend) { idle = true }
        #expect(!idle, "a turn still runs on the old backend")
        core.emit(.final("1 from the old"), run: 0)
        #expect(idle)
        #expect(replacement.runs.map(\.request.text) == ["two"], "the queued turn was not lost")
        replacement.runs[0].emit(.final("2 from the new"))
        core.loop.runUntilIdle()
        #expect(phone.messages.map(\.content) == ["one", "two", "1 from the old", "2 from the new"])
    }

    @Test func anIdleBackendIsReleasedAtOnceAndAnUnchangedOneIsNotDropped() {
        let core = CoreFixture()
        let dropped = core.hub.router.replace(with: [core.backend])
        #expect(dropped.map(\.name) == ["other"])
        var idle = false
        core.hub.turns.whenIdle(core.other) { idle = true }
        #expect(idle)
    }

    @Test func aRemovedBackendFailsTheNextTurnByNameAndTheDefaultFollowsTheFirst() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.hub.router.replace(with: [core.other])
        #expect(core.hub.router.defaultBackend == "other")
        let bound = core.resolve(.session("bound"), draft: ConversationDraft(backend: "scripted"))
        core.submit(core.message("hi", device: "phone", conversation: bound))
        #expect(phone.failures.map(\.reason) == ["no backend named scripted"])
        core.submit(core.message("default", device: "phone"))
        #expect(core.other.runs.map(\.request.text) == ["default"])
    }

    @Test func aTurnEndedWithoutAnAnswerReleasesItsBackendToo() {
        let core = CoreFixture()
        core.connect("phone")
        core.submit(core.message("one", device: "phone"))
        core.hub.router.replace(with: [ScriptedBackend(name: "scripted")])
        var idle = false
        core.hub.turns.whenIdle(core.backend) { idle = true }
        core.emit(.failed("gone"), run: 0)
        #expect(idle)
    }
}
