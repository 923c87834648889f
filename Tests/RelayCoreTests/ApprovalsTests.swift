import RelayCore
import RelayTesting
import Testing

@Suite struct ApprovalsTests {
    static func bash(_ command: String, request: String = "req-1", timeoutMillis: Int = 600_000) -> TurnEvent {
        .approval(
            ApprovalAsk(
                requestID: request,
                agent: "Claude Code",
                toolName: "Bash",
                summary: command,
                input: .object(["command": .string(command)]),
                toolUseID: "toolu_1",
                timeoutMillis: timeoutMillis
            )
        )
    }

    /// A fixture with the phone connected, a turn running and `touch x` waiting for an answer.
    static func asking() -> (CoreFixture, RecordingEndpoint, Approval) {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("make x", device: "phone"))
        core.emit(bash("touch x"), run: 0)
        let approval = core.hub.approvals.pending(userID: core.user)[0]
        return (core, phone, approval)
    }

    @Test func aQuestionReachesEveryDeviceAndANoteSaysHowToAnswer() throws {
        let (core, phone, approval) = Self.asking()
        #expect(approval.shortID.count == 4 && approval.id.hasPrefix(approval.shortID) && approval.id.count == 32)
        #expect(approval.toolName == "Bash" && approval.summary == "touch x" && approval.requestID == "req-1")
        #expect(approval.expiresAt - approval.createdAt == 600_000)
        let updates = phone.events.compactMap { if case .approval(let update) = $0 { update } else { nil } }
        #expect(updates == [.requested(approval)])
        let note = try #require(phone.messages.last)
        #expect(note.isNote && note.role == .assistant && note.turn == nil)
        let id = approval.shortID
        #expect(note.content == "Claude Code wants to run Bash: `touch x`. Reply /approve \(id), /always \(id) or /deny \(id) (expires in 10 min).")
        #expect(core.journal.approvals[approval.id]?.resolution == nil, "the pending approval is recorded")
    }

    @Test func theFirstDecisionWinsAndEveryoneHearsIt() throws {
        let (core, phone, approval) = Self.asking()
        let (tablet, _) = core.connect("tablet")
        var first: Result<Approval, ApprovalRefusal>?
        var second: Result<Approval, ApprovalRefusal>?
        core.hub.approvals.decide(approval.shortID, userID: core.user, decision: .allowAlways, deviceID: "tablet") { first = $0 }
        core.hub.approvals.decide(approval.id, userID: core.user, decision: .deny, deviceID: "phone") { second = $0 }
        core.loop.runUntilIdle()
        #expect(try first?.get().id == approval.id)
        guard case .failure(.resolved(_, let resolution)) = second else {
            Issue.record("the second decision must be refused")
            return
        }
        #expect(resolution.decision == .allowAlways && resolution.by.deviceID == "tablet" && resolution.by.protocolName == "test")
        #expect(core.backend.runs[0].answers.map(\.requestID) == ["req-1"])
        #expect(core.backend.runs[0].answers.map(\.answer) == [.allow(always: true)])
        for device in [phone, tablet] {
            let resolved = device.events.contains { if case .approval(.resolved(let asked, _)) = $0 { asked.id == approval.id } else { false } }
            #expect(resolved)
        }
        #expect(phone.messages.last?.content == "Bash `touch x`: always allowed (for this session) by tablet from test (\(approval.shortID)).")
        #expect(core.journal.approvals[approval.id]?.resolution?.by.deviceID == "tablet")
    }

    @Test func aDenialTellsTheBackendWhoDeniedIt() throws {
        let (core, _, approval) = Self.asking()
        core.journal.devices["phone"] = DeviceRecord(
            id: "phone",
            userID: core.user,
            protocolName: "test",
            claimedName: "Ann's iPhone",
            deviceInfoJSON: nil,
            isAdmin: false,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: true,
            createdAt: 0,
            lastSeenAt: nil
        )
        core.hub.approvals.decide(approval.shortID, userID: core.user, decision: .deny, deviceID: "phone") { _ in }
        core.loop.runUntilIdle()
        #expect(core.backend.runs[0].answers.map(\.answer) == [.deny(message: "Denied by Ann's iPhone from test")])
    }

    @Test func nobodyAnsweringDeniesItAndWaitingIsNotSilence() throws {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("make x", device: "phone"), policy: TurnPolicy(inactivityMillis: 60_000))
        core.emit(Self.bash("touch x", timeoutMillis: 120_000), run: 0)
        core.loop.advance(millis: 90_000)
        #expect(phone.failures.isEmpty, "a turn waiting for its user is not silent")
        #expect(core.backend.runs[0].answers.isEmpty)
        core.loop.advance(millis: 30_000)
        #expect(core.backend.runs[0].answers.map(\.answer) == [.deny(message: "Nobody answered the permission request within 2 min; it was denied")])
        #expect(core.hub.approvals.pending(userID: core.user).isEmpty)
        #expect(
            phone.messages.last?.content.hasSuffix("denied: nobody answered in time (\(core.journal.approvals.values.first!.approval.shortID)).")
                == true
        )
        core.loop.advance(millis: 59_000)
        #expect(phone.failures.isEmpty, "the backend's silence counts again from the answer")
        core.loop.advance(millis: 1_000)
        #expect(phone.failures.map(\.reason) == ["no output for 60 s"])
    }

    @Test func abortingTheTurnCancelsItsQuestions() throws {
        let (core, phone, approval) = Self.asking()
        core.hub.turns.abort(conversationID: core.conversation.id)
        core.loop.runUntilIdle()
        #expect(core.hub.approvals.pending(userID: core.user).isEmpty)
        #expect(core.journal.approvals[approval.id]?.resolution?.cause == .cancelled)
        #expect(core.backend.runs[0].isCancelled)
        let resolved = phone.events.contains {
            if case .approval(.resolved(_, let resolution)) = $0 { resolution.cause == .cancelled } else { false }
        }
        #expect(resolved)
    }

    @Test func aWithdrawnQuestionIsResolvedWithoutAnAnswer() {
        let (core, _, approval) = Self.asking()
        core.emit(.approvalWithdrawn(requestID: "req-1"), run: 0)
        #expect(core.hub.approvals.pending(userID: core.user).isEmpty)
        #expect(core.backend.runs[0].answers.isEmpty)
        #expect(core.journal.approvals[approval.id]?.resolution?.cause == .cancelled)
    }

    @Test func approveCommandsAnswerAtOnceBesideTheWaitingTurn() throws {
        let (core, phone, approval) = Self.asking()
        let outcome = core.submit(core.message("/approve \(approval.shortID)", device: "phone"))
        #expect(outcome.isAccepted)
        #expect(core.backend.runs.count == 1, "no backend sees the command")
        #expect(core.backend.runs[0].answers.map(\.answer) == [.allow(always: false)])
        let replies = phone.messages.filter { $0.turn?.clientID == "c_/approve \(approval.shortID)" && $0.role == .assistant }
        #expect(replies.map(\.content) == ["Approved once: Bash touch x (\(approval.shortID))."])
        core.emit(.final("made x"), run: 0)
        #expect(phone.messages.last?.content == "made x")
    }

    @Test func commandsRefuseWhatTheyCannotDecide() throws {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("/deny", device: "phone"))
        core.submit(core.message("/approve abc", device: "phone"))
        core.submit(core.message("/approve ffffffff", device: "phone"))
        #expect(
            phone.messages.filter { $0.role == .assistant }.map(\.content) == [
                "There is no approval waiting.",
                "Could not approve: abc is too short: give at least 4 characters of the approval's id.",
                "Could not approve: no pending approval ffffffff.",
            ]
        )
        #expect(core.backend.runs.isEmpty)
    }

    @Test func shortIDsGrowUntilTheyAreUniqueAmongTheUsersPendingApprovals() {
        let core = CoreFixture()
        core.connect("phone")
        let other = core.resolve(.session("second"))
        core.submit(core.message("one", device: "phone"))
        core.submit(core.message("two", device: "phone", conversation: other))
        core.emit(Self.bash("a", request: "r1"), run: 0)
        core.emit(Self.bash("b", request: "r2"), run: 1)
        let pending = core.hub.approvals.pending(userID: core.user)
        #expect(pending.count == 2)
        #expect(!pending[1].shortID.hasPrefix(pending[0].shortID) || pending[1].shortID.count > pending[0].shortID.count)
        #expect(!pending[0].id.hasPrefix(pending[1].shortID))
    }

    @Test func parsesTheApprovalCommands() {
        #expect(RelayCommand("/approve 4f2a") == .approval(.allowOnce, "4f2a"))
        #expect(RelayCommand(" /always 4F2A ") == .approval(.allowAlways, "4F2A"))
        #expect(RelayCommand("/deny") == .approval(.deny, nil))
        #expect(RelayCommand("/denying 4f2a") == nil)
        #expect(RelayCommand("/cost") == nil, "Claude Code's own commands pass through")
    }

    @Test func reportsAreStoredAndCountedPerBackend() {
        let core = CoreFixture()
        core.connect("phone")
        core.submit(core.message("hi", device: "phone"))
        core.emit(.report(TurnReport(costUSD: 0.25, inputTokens: 10, outputTokens: 5, terminalReason: "completed")), run: 0)
        core.emit(.final("hello"), run: 0)
        #expect(core.journal.turnReports.values.map(\.report.costUSD) == [0.25])
        #expect(core.journal.turnReports.values.first?.backend == "scripted")
        #expect(core.hub.counters.costUSD == ["scripted": 0.25] && core.hub.counters.reportedRuns == ["scripted": 1])
    }

    @Test func statusLinesAreShownLive() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("hi", device: "phone"))
        core.emit(.status("API overloaded, retrying 2/10"), run: 0)
        let lines = phone.events.compactMap { if case .status(let status) = $0 { status.text } else { nil } }
        #expect(lines == ["API overloaded, retrying 2/10"])
    }
}
