import RelayTesting
import Testing

@testable import RelayCore

/// Waiting for a run's end by its id (OpenClaw's `agent.wait`): how the last runs ended is kept,
/// waits are per user and may be given up, and nothing is left behind.
@Suite struct RunWaitTests {
    func message(_ core: CoreFixture, _ text: String, run: String) -> UserMessage {
        var message = core.message(text, device: "phone")
        message.runID = run
        return message
    }

    @Test func aWaitRegisteredBeforeTheMessageHearsItsEndAndTheEndingIsKept() {
        let core = CoreFixture()
        core.connect("phone")
        var heard: [String] = []
        core.hub.turns.watch(runID: "r-1", userID: core.user) { end in
            if case .answered(let event) = end { heard.append(event.content) }
        }
        #expect(core.hub.turns.ending(ofRun: "r-1", userID: core.user) == nil)
        core.submit(message(core, "hi", run: "r-1"))
        core.emit(.final("done"), run: 0)
        #expect(heard == ["done"])
        let ending = core.hub.turns.ending(ofRun: "r-1", userID: core.user)
        #expect(ending?.outcome == .answered && ending?.endedAt == core.loop.clock.nowMillis())
        #expect(core.hub.turns.ending(ofRun: "r-1", userID: "someone-else") == nil, "run ids are per user")
        #expect(core.hub.turns.watchCount == 0)
    }

    @Test func failuresAndAbortsAreKeptWithTheirCause() {
        let core = CoreFixture()
        core.connect("phone")
        let other = core.resolve(.session("other"))
        core.submit(message(core, "one", run: "fails"))
        var aborted = core.message("two", device: "phone", conversation: other)
        aborted.runID = "aborted"
        core.submit(aborted)
        core.emit(.failed("boom"), run: 0)
        core.hub.turns.abort(conversationID: other.id)
        core.loop.runUntilIdle()
        guard case .failed(let failure)? = core.hub.turns.ending(ofRun: "fails", userID: core.user)?.outcome else {
            Issue.record("no failure kept")
            return
        }
        #expect(failure.cause == .failed && failure.reason == "boom")
        guard case .failed(let abort)? = core.hub.turns.ending(ofRun: "aborted", userID: core.user)?.outcome else {
            Issue.record("no abort kept")
            return
        }
        #expect(abort.cause == .aborted)
    }

    @Test func aWaitGivenUpIsNeverCalledAndAnotherUsersRunDoesNotEndIt() {
        let core = CoreFixture()
        core.connect("phone")
        var calls = 0
        let given = core.hub.turns.watch(runID: "r-2", userID: core.user) { _ in calls += 1 }
        core.hub.turns.watch(runID: "r-2", userID: "another-user") { _ in calls += 10 }
        #expect(core.hub.turns.watchCount == 2)
        core.hub.turns.unwatch(given)
        core.hub.turns.unwatch(given)
        #expect(core.hub.turns.watchCount == 1)
        core.submit(message(core, "hi", run: "r-2"))
        core.emit(.final("done"), run: 0)
        #expect(calls == 0, "the given-up wait is not called; the other user's is not this run")
        #expect(core.hub.turns.watchCount == 1, "another user's wait stays for its own run")
    }

    @Test func theOldestEndingsAreForgottenPastTheCapacity() {
        var endings = RunEndings(capacity: 3)
        for index in 0..<10 {
            endings.record(RunEnding(runID: "r\(index)", userID: "u", outcome: .answered, endedAt: Int64(index)))
            endings.record(RunEnding(runID: "r\(index)", userID: "u", outcome: .answered, endedAt: Int64(index) + 100))
        }
        #expect(endings.count == 3)
        #expect((0..<7).allSatisfy { endings.ending(runID: "r\($0)", userID: "u") == nil })
        #expect(endings.ending(runID: "r9", userID: "u")?.endedAt == 109, "a run recorded again keeps its newest ending")
        #expect(endings.ending(runID: "r7", userID: "u") != nil && endings.ending(runID: "r8", userID: "u") != nil)
    }
}
