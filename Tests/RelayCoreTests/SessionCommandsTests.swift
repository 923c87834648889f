import RelayCore
import RelayTesting
import Testing

/// OpenClaw's gateway commands, run by the relay in any protocol: `/new`, `/reset`, `/clear`,
/// `/model`, `/think`, `/compact`, `/stop`.
@Suite struct SessionCommandsTests {
    @Test func theGatewaysCommandsParse() {
        #expect(RelayCommand("/new") == .reset(.new) && RelayCommand(" /reset ") == .reset(.reset) && RelayCommand("/clear") == .reset(.reset))
        #expect(RelayCommand("/model claude-code/claude") == .model("claude-code/claude") && RelayCommand("/model") == .model(nil))
        #expect(RelayCommand("/think high") == .think("high") && RelayCommand("/compact") == .compact && RelayCommand("/stop") == .stop)
        #expect(RelayCommand("/new plans for today") == nil, "with words after it, it is a message")
        #expect(RelayCommand("/newer") == nil && RelayCommand("/compact now") == nil && RelayCommand("/stopping") == nil)
    }

    @Test func newStartsAFreshConversationForTheKeysAndArchivesTheOld() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        var changes: [ConversationChange] = []
        core.hub.changes.observe { changes.append($0) }
        core.submit(core.message("hello", device: "phone"))
        core.emit(.backendSession("claude-1"), run: 0)
        core.emit(.final("hi"), run: 0)
        core.submit(core.message("/new", device: "phone"))
        #expect(phone.messages.last?.content == "Started a new session. The earlier messages stay in the archived conversation.")
        let old = core.conversation.id
        let fresh = core.resolve(.main)
        #expect(fresh.id != old && fresh.backendSession == nil && fresh.keys == [.main], "the key names a fresh conversation")
        #expect(core.journal.conversations[old]?.archived == true && core.journal.conversations[old]?.keys == [])
        #expect(core.backend.resets == [old], "the backend let go of the old conversation")
        #expect(changes.contains { if case .reset(let reset, .new) = $0 { reset.fresh.id == fresh.id && reset.old.id == old } else { false } })
        core.submit(core.message("again", device: "phone", conversation: fresh))
        #expect(core.backend.runs.last?.request.backendSession == nil && core.backend.runs.last?.request.conversationID == fresh.id)
    }

    @Test func aMessageSentWhileAResetIsUnderWayGoesToTheFreshConversation() {
        let core = CoreFixture()
        core.connect("phone")
        let old = core.conversation.id
        var outcome: SubmitOutcome?
        core.hub.turns.reset(conversationID: old, reason: .new, policy: TurnPolicy()) { _ in }
        // Sent before the reset is stored (a client that reacts at once to `/new`'s answer).
        core.hub.turns.submit(core.message("right after", device: "phone", conversation: core.conversation), policy: TurnPolicy()) { outcome = $0 }
        core.loop.runUntilIdle()
        let fresh = core.resolve(.main)
        #expect(outcome?.isAccepted == true && fresh.id != old)
        #expect(core.backend.runs.last?.request.conversationID == fresh.id && core.backend.runs.last?.request.text == "right after")
        #expect(core.journal.events.filter { $0.conversationID == old }.allSatisfy { $0.content != "right after" })
    }

    @Test func aResetStopsTheConversationsTurnsAndKeepsItsSettings() throws {
        let core = CoreFixture()
        core.submit(core.message("running", device: "phone"))
        var edited: Conversation?
        core.hub.conversations.edit(id: core.conversation.id, .all([.retitle("Plans"), .configure(.thinkingLevel("high"))])) {
            edited = try? $0.get()
        }
        core.loop.runUntilIdle()
        #expect(edited?.settings.thinkingLevel == "high")
        var reset: ConversationReset?
        core.hub.turns.reset(conversationID: core.conversation.id, reason: .reset, policy: TurnPolicy()) { reset = try? $0.get() }
        core.loop.runUntilIdle()
        let done = try #require(reset)
        #expect(core.backend.runs[0].isCancelled, "the running turn stopped")
        #expect(done.fresh.title == "Plans" && done.fresh.settings.thinkingLevel == "high" && done.old.archived)
    }

    @Test func modelAndThinkChangeTheConversationAndAnswerThemselves() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("/model claude-code/other", device: "phone"))
        core.submit(core.message("/think harder", device: "phone"))
        core.submit(core.message("/think loud", device: "phone"))
        core.submit(core.message("/model nope", device: "phone"))
        #expect(core.backend.runs.isEmpty && core.other.runs.isEmpty, "no backend sees them")
        #expect(
            phone.messages.filter { $0.role == .assistant }.map(\.content) == [
                "This conversation is now answered by other (it was scripted).", "Thinking: medium from the next message.",
                "There is no thinking level loud. Levels: off, minimal, low, medium, high, adaptive, xhigh, max.",
                "There is no backend named nope. Backends: other, scripted.",
            ]
        )
        core.submit(core.message("hello", device: "phone"))
        #expect(core.other.runs.last?.request.settings.thinkingLevel == "medium")
    }

    @Test func stopIsAnsweredAtOnceAndCompactIsTheBackendsWhenItCompacts() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("long", device: "phone"))
        core.submit(core.message("/stop", device: "phone"))
        #expect(core.backend.runs[0].isCancelled)
        #expect(phone.messages.last?.content == "Stopped 1 run.")
        var compacted: [Bool] = []
        core.hub.changes.observe { if case .compacted(_, _, let done) = $0 { compacted.append(done) } }
        core.submit(core.message("/compact", device: "phone"))
        #expect(phone.messages.last?.content == "scripted keeps no context of its own to compact." && compacted == [false])
        core.backend.canCompact = true
        core.submit(core.message("/compact", device: "phone", clientID: "c2"))
        #expect(core.backend.runs.last?.request.text == "/compact", "Claude Code's own /compact")
        core.emit(.final("Compacted."), run: core.backend.runs.count - 1)
        #expect(compacted == [false, true])
    }
}
