import ChatModel
import Testing

/// Approvals in the client: shown at the bottom of their conversation's buffer with the command,
/// answered by Alt-O / Alt-S / Alt-N or `/approve`, `/always`, `/deny [id]`, gone with a line
/// saying how they ended.
@Suite struct ChatStateApprovalTests {
    static let id = "4f2a9c0e11112222333344445555aaaa"

    static func bash(
        _ key: String = "a",
        id: String = ChatStateApprovalTests.id,
        choices: [ApprovalChoice] = ApprovalChoice.allCases
    ) -> PendingApproval {
        PendingApproval(
            id: id,
            kind: .exec,
            key: key,
            summary: "run `touch x`",
            detail: "in /work/project",
            choices: choices,
            createdAt: ChatFixture.start,
            expiresAt: ChatFixture.start + 600_000
        )
    }

    private func ready() -> ChatFixture {
        var fixture = ChatFixture.connected([session("a", displayName: "Trip", updatedAt: 2), session("b", displayName: "Work", updatedAt: 1)])
        fixture.history("a", 1...1)
        return fixture
    }

    private func conversationTexts(_ fixture: ChatFixture) -> [String] {
        fixture.state.screen().conversation.rows.map(\.text)
    }

    @Test func aWaitingApprovalShowsItsCommandAndTheKeysAtTheBottomOfItsBuffer() {
        var fixture = ready()
        #expect(fixture.server(.approvalRequested(Self.bash())) == [.redraw], "the active buffer: no bell")
        let rows = fixture.state.screen().conversation.rows
        #expect(
            rows.suffix(3).map(\.text) == [
                "22:13 approve? │ run `touch x` (4f2a9c0e, expires 22:23)",
                "               │ in /work/project",
                "               │ Alt-O allow once · Alt-S always · Alt-N deny",
            ]
        )
        #expect(rows.suffix(3).allSatisfy { $0.style == .approval && $0.lineID == "approval-" + Self.id })
        fixture.server(.message(key: "a", fixture.message("a", 2, text: "later line")))
        #expect(
            conversationTexts(fixture).suffix(3).first == "22:13 approve? │ run `touch x` (4f2a9c0e, expires 22:23)",
            "it stays after the last line"
        )
    }

    @Test func theKeysAnswerTheOldestApprovalWaitingHereAndItShowsTheAnswerOnItsWay() {
        var fixture = ready()
        fixture.server(.approvalRequested(Self.bash()))
        fixture.server(.approvalRequested(Self.bash(id: "99990000")))
        #expect(fixture.key(.alt("o")) == [.resolveApproval(id: Self.id, kind: .exec, choice: .allowOnce), .redraw])
        #expect(conversationTexts(fixture).contains("               │ answering: allow once…"))
        #expect(fixture.key(.alt("n")) == [.resolveApproval(id: Self.id, kind: .exec, choice: .deny), .redraw], "another answer may follow")
        fixture.server(.approvalResolved(Self.bash(), outcome: "allowed once by clawrelay chat"))
        #expect(fixture.state.approvals.map(\.id) == ["99990000"])
        #expect(fixture.state.activeBuffer?.lines.last?.text == "run `touch x`: allowed once by clawrelay chat")
        #expect(fixture.state.activeBuffer?.lines.last?.role == .system)
        #expect(fixture.key(.alt("s")) == [.resolveApproval(id: "99990000", kind: .exec, choice: .allowAlways), .redraw])
    }

    @Test func anApprovalElsewhereOpensItsBufferCallsForAttentionAndIsNotAnsweredFromHere() {
        var fixture = ready()
        let effects = fixture.server(.approvalRequested(Self.bash("c")))
        #expect(effects == [.bell, .redraw])
        #expect(fixture.state.buffers["c"] != nil && fixture.state.hotlist.level(of: "c") == .message)
        #expect(fixture.key(.alt("o")) == [.redraw])
        #expect(fixture.state.notice == "no approval waits here; one waits in buffer 3")
        fixture.key(.alt("a"))
        #expect(fixture.state.activeKey == "c")
        #expect(fixture.key(.alt("o")).first == .resolveApproval(id: Self.id, kind: .exec, choice: .allowOnce))
    }

    @Test func commandsTakeAnIdPrefixAndRefusalsAreShown() {
        var fixture = ready()
        #expect(fixture.type("/approve", enter: true) == [.redraw])
        #expect(fixture.state.notice == "no approval waiting")
        fixture.server(.approvalRequested(Self.bash("b", choices: [.allowOnce, .deny])))
        #expect(fixture.type("/deny 4F2A", enter: true).first == .resolveApproval(id: Self.id, kind: .exec, choice: .deny), "any buffer, by id")
        #expect(fixture.type("/always 4f2a", enter: true) == [.redraw])
        #expect(fixture.state.notice == "this approval cannot be answered always (this session)")
        #expect(fixture.type("/approve zz", enter: true) == [.redraw])
        #expect(fixture.state.notice == "no approval zz is waiting")
        #expect(fixture.type("/approve a b", enter: true) == [.redraw])
        #expect(fixture.state.notice == "/approve takes one approval id at most")
        fixture.server(.approvalAnswerFailed(id: Self.id, message: "INVALID_REQUEST: approval already resolved"))
        #expect(fixture.state.notice == "could not answer 4f2a9c0e: INVALID_REQUEST: approval already resolved")
        #expect(fixture.state.approvals.first?.answering == nil, "it can be answered again")
    }

    @Test func aListAfterAReconnectReplacesWhatWasKnown() {
        var fixture = ready()
        fixture.server(.approvalRequested(Self.bash()))
        fixture.key(.alt("o"))
        let other = Self.bash("b", id: "7777")
        #expect(fixture.server(.approvalsListed([Self.bash(), other])) == [.bell, .redraw], "the new one calls for attention")
        #expect(fixture.state.approvals.map(\.id) == [Self.id, "7777"] && fixture.state.approvals.first?.answering == .allowOnce)
        fixture.server(.approvalsListed([]))
        #expect(fixture.state.approvals.isEmpty && !conversationTexts(fixture).contains { $0.contains("approve?") })
    }

    @Test func theHelpListsTheKeys() {
        var fixture = ready()
        fixture.type("/help", enter: true)
        #expect(fixture.state.activeBuffer?.lines.last?.text.contains("Alt-O allow once, Alt-S always (this session), Alt-N deny") == true)
        #expect((try? CommandParser.parse("/always")?.get()) == .answer(.allowAlways, id: nil))
    }
}
