import RelayCore
import RelayTesting
import Testing

extension RecordingEndpoint {
    var tools: [ToolProgress] {
        events.compactMap { if case .tool(let tool) = $0 { tool } else { nil } }
    }
}

@Suite struct TurnToolsAndSessionsTests {
    static let bash = ToolActivity(id: "toolu_1", name: "Bash", label: "ls", inputJSON: #"{"command":"ls"}"#)

    @Test func toolEventsGoLiveToForegroundDevicesInOrderWithTheTurnsIDs() throws {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        let (tablet, _) = core.connect("tablet", delivery: .queue(ttlMillis: 60_000, capacity: 100, scheme: nil))
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        core.submit(core.message("list", device: "phone"))
        core.emit(.progress("Looking."), run: 0)
        core.emit(.toolStarted(Self.bash), run: 0)
        var ended = Self.bash
        ended.success = false
        core.emit(.toolEnded(ended), run: 0)
        core.emit(.final("Looking.\n\nDone."), run: 0)

        let kinds: [String] = phone.events.map {
            switch $0 {
            case .message(let event): "message:\(event.role.rawValue)"
            case .streaming: "streaming"
            case .tool(let tool): "tool:\(tool.phase.rawValue)"
            case .assistantTyping(_, let active): "typing:\(active)"
            case .turnFailed: "failed"
            case .status: "status"
            case .approval: "approval"
            }
        }
        #expect(kinds == ["message:user", "typing:true", "streaming", "tool:started", "tool:ended", "message:assistant", "typing:false"])
        let answer = try #require(phone.messages.last)
        #expect(phone.tools.map(\.activity) == [Self.bash, ended])
        #expect(phone.tools.allSatisfy { $0.eventID == answer.id && $0.conversationID == core.conversation.id && $0.turn == answer.turn })
        #expect(tablet.events.isEmpty)
        let queued = core.journal.queue(of: "tablet")
        #expect(queued.count == 2, "the background device queues the message and the answer, never tools: \(queued)")
    }

    @Test func toolEventsKeepASilentTurnAlive() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("build", device: "phone"), policy: TurnPolicy(inactivityMillis: 1_000))
        core.loop.advance(millis: 600)
        core.emit(.toolStarted(Self.bash), run: 0)
        core.loop.advance(millis: 600)
        core.emit(.toolEnded(Self.bash), run: 0)
        core.loop.advance(millis: 600)
        #expect(phone.failures.isEmpty, "each tool event re-arms the timer")
        core.loop.advance(millis: 500)
        #expect(phone.failures.map(\.cause) == [.failed])
    }

    @Test func aToolEventAfterTheTurnEndedIsDropped() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("hi", device: "phone"))
        core.emit(.final("done"), run: 0)
        core.emit(.toolStarted(Self.bash), run: 0)
        #expect(phone.tools.isEmpty)
    }

    @Test func theBackendSessionIsStoredAndHandedToTheConversationsNextTurn() {
        let core = CoreFixture()
        core.connect("phone")
        let other = core.resolve(.session("other"))
        core.submit(core.message("one", device: "phone"))
        #expect(core.backend.runs[0].request.backendSession == nil)
        core.emit(.backendSession("sess-1"), run: 0)
        #expect(core.journal.conversations[core.conversation.id]?.backendSession == "sess-1")
        core.emit(.final("1"), run: 0)

        core.submit(core.message("two", device: "phone"))
        core.submit(core.message("elsewhere", device: "phone", conversation: other))
        #expect(core.backend.runs[1].request.backendSession == "sess-1")
        #expect(core.backend.runs[2].request.backendSession == nil, "sessions are per conversation")
        core.emit(.backendSession("sess-2"), run: 1)
        core.emit(.final("2"), run: 1)
        core.submit(core.message("three", device: "phone"))
        #expect(core.backend.runs[3].request.backendSession == "sess-2", "the newest id wins")
    }

    @Test func aForgottenSessionIsNotResumedAndOddIDsAreNotKept() {
        let core = CoreFixture()
        core.connect("phone")
        core.submit(core.message("one", device: "phone"))
        core.emit(.backendSession("sess-1"), run: 0)
        core.emit(.backendSession(nil), run: 0)
        core.emit(.failed("could not resume"), run: 0)
        #expect(core.journal.conversations[core.conversation.id]?.backendSession == nil)
        core.submit(core.message("two", device: "phone"))
        #expect(core.backend.runs[1].request.backendSession == nil)
        core.emit(.backendSession(String(repeating: "x", count: Conversations.backendSessionLimit + 1)), run: 1)
        core.emit(.final("2"), run: 1)
        core.submit(core.message("three", device: "phone"))
        #expect(core.backend.runs[2].request.backendSession == nil, "an id past the limit is not kept")
    }

    @Test func toolActivityBoundsWhatABackendSends() {
        let long = String(repeating: "n", count: 1_000)
        let input = "{\"text\":\"" + String(repeating: "a", count: ToolActivity.inputLimit) + "\"}"
        let tool = ToolActivity(id: long, name: long, label: long, inputJSON: input)
        #expect(tool.id.count == ToolActivity.textLimit && tool.name.count == ToolActivity.textLimit && tool.label?.count == ToolActivity.textLimit)
        #expect(tool.inputJSON == "{}")
        #expect(ToolActivity(id: "1", name: "Read", inputJSON: #"{"file_path":"/a"}"#).inputJSON == #"{"file_path":"/a"}"#)
    }
}
