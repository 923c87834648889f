import RelayCore
import Testing

@testable import LocalBridge

/// Claude Code's permission prompts (`can_use_tool`) as the relay's approvals, and their answers.
@Suite struct ClaudeSessionApprovalTests {
    static let request = "e980cfc6-4413-4829-b209-5a7f8864af55"
    static let input = JSONValue.object(["command": .string("touch ran1 && echo ok1"), "description": .string("touch")])

    private func asked() -> SessionDriver {
        var driver = SessionDriver(ClaudeSession.Settings(approvalTimeoutMillis: 120_000, directory: "/srv/app"))
        _ = driver.begin()
        _ = driver.feed(ClaudeLines.toolUse())
        return driver
    }

    @Test func aPermissionPromptIsAnApproval() {
        var driver = SessionDriver(ClaudeSession.Settings(approvalTimeoutMillis: 120_000, directory: "/srv/app"))
        _ = driver.begin()
        let events = driver.feed(ClaudeLines.canUseTool()).events()
        let ask = ApprovalAsk(
            requestID: Self.request,
            agent: "Claude Code",
            toolName: "Bash",
            summary: "touch ran1 && echo ok1",
            input: Self.input,
            toolUseID: "toolu_1",
            directory: "/srv/app",
            decisions: [.allowOnce, .allowAlways, .deny],
            timeoutMillis: 120_000
        )
        #expect(events == [.approval(ask)])
    }

    @Test func allowAnswersWithTheInputAndAlwaysAddsTheSuggestedRuleForThisSessionOnly() throws {
        var once = asked()
        _ = once.feed(ClaudeLines.canUseTool())
        let allowed = try #require(once.session.answer(turn: 1, requestID: Self.request, .allow(always: false), now: 10).written.first)
        #expect(allowed["type"] == .string("control_response"))
        #expect(allowed["response"]?["subtype"] == .string("success") && allowed["response"]?["request_id"] == .string(Self.request))
        #expect(allowed["response"]?["response"] == .object(["behavior": .string("allow"), "updatedInput": Self.input]))
        #expect(once.session.answer(turn: 1, requestID: Self.request, .allow(always: false), now: 11).isEmpty, "answered once")

        var always = asked()
        _ = always.feed(ClaudeLines.canUseTool())
        let line = try #require(always.session.answer(turn: 1, requestID: Self.request, .allow(always: true), now: 10).written.first)
        let rule = JSONValue.object([
            "type": .string("addRules"), "rules": .array([.object(["toolName": .string("Bash"), "ruleContent": .string("touch ran1 *")])]),
            "behavior": .string("allow"), "destination": .string("session"),
        ])
        #expect(line["response"]?["response"]?["updatedPermissions"] == .array([rule]), "never localSettings, never a mode or directory")
    }

    @Test func denyTellsClaudeWhoDenied() throws {
        var driver = asked()
        _ = driver.feed(ClaudeLines.canUseTool())
        let answer = ApprovalAnswer.deny(message: "Denied by Ann's iPhone from clawline")
        let line = try #require(driver.session.answer(turn: 1, requestID: Self.request, answer, now: 10).written.first)
        #expect(
            line["response"]?["response"] == .object(["behavior": .string("deny"), "message": .string("Denied by Ann's iPhone from clawline")])
        )
    }

    @Test func waitingForAnAnswerIsNotSilenceNorTime() {
        var settings = ClaudeSession.Settings()
        (settings.inactivityMillis, settings.maxTurnMillis) = (1_000, 3_000)
        var driver = SessionDriver(settings)
        _ = driver.begin()
        _ = driver.tick(at: 500)
        _ = driver.feed(ClaudeLines.canUseTool())
        #expect(driver.tick(at: 60_000).isEmpty, "a minute waiting for the user")
        _ = driver.session.answer(turn: 1, requestID: Self.request, .allow(always: false), now: 60_000)
        #expect(driver.tick(at: 60_999).isEmpty)
        #expect(driver.tick(at: 61_000).events() == [.typing(false), .failed("no output for 1 s")])

        var long = SessionDriver(settings)
        _ = long.begin()
        _ = long.tick(at: 500)
        _ = long.feed(ClaudeLines.canUseTool())
        _ = long.session.answer(turn: 1, requestID: Self.request, .allow(always: false), now: 100_500)
        for time in stride(from: Int64(101_400), to: 103_000, by: 900) {
            _ = long.tick(at: time)
            _ = long.feed(ClaudeLines.requesting)
        }
        #expect(long.tick(at: 102_999).isEmpty, "the wait does not count toward max")
        #expect(long.tick(at: 103_000).events().last == .failed("ran longer than 3 s"))
    }

    @Test func aWithdrawnQuestionIsWithdrawn() {
        var driver = asked()
        _ = driver.feed(ClaudeLines.canUseTool())
        #expect(driver.feed(ClaudeLines.cancelRequest()).events() == [.approvalWithdrawn(requestID: Self.request)])
        #expect(driver.session.answer(turn: 1, requestID: Self.request, .allow(always: false), now: 1).isEmpty, "too late")
    }

    @Test func abortingWhileAskingSendsNothingMoreAndInterrupts() {
        var driver = asked()
        _ = driver.feed(ClaudeLines.canUseTool())
        let cancelled = driver.session.cancel(turn: 1, now: 5)
        #expect(cancelled.events().isEmpty && cancelled.written.count == 1)
        #expect(driver.feed(ClaudeLines.cancelRequest(), ClaudeLines.interruptAnswer, ClaudeLines.interruptedResult).events().isEmpty)
    }

    @Test func aQuestionWithNobodyToAskIsDenied() throws {
        var driver = SessionDriver()
        _ = driver.begin()
        _ = driver.feed(ClaudeLines.result("done"))
        let line = try #require(driver.feed(ClaudeLines.canUseTool()).written.first)
        #expect(line["response"]?["response"]?["behavior"] == .string("deny"))
        #expect(line["response"]?["response"]?["message"] == .string(ClaudeSession.nobodyToAsk))
    }

    @Test func otherControlRequestsAreAnsweredNotHandled() throws {
        var driver = SessionDriver()
        _ = driver.begin()
        let request = #"{"type":"control_request","request_id":"r-9","request":{"subtype":"hook_callback","callback_id":"x"}}"#
        let line = try #require(driver.feed(request).written.first)
        #expect(line["response"]?["subtype"] == .string("error") && line["response"]?["request_id"] == .string("r-9"))
    }

    @Test func aSummaryShowsTheWholeCommandOnOneLine() {
        let input = JSONValue.object(["command": .string("cd /srv\n  rm -rf build"), "description": .string("clean")])
        #expect(ClaudeToolText.summary(tool: "Bash", input: input, description: "clean") == "cd /srv ⏎ rm -rf build")
        #expect(ClaudeToolText.summary(tool: "Write", input: .object(["file_path": .string("/srv/a.txt")]), description: nil) == "/srv/a.txt")
        #expect(ClaudeToolText.summary(tool: "Task", input: .object([:]), description: "look around") == "look around")
        let long = ClaudeToolText.summary(tool: "Bash", input: .object(["command": .string(String(repeating: "x", count: 900))]), description: nil)
        #expect(long.count == ClaudeToolText.summaryLimit && long.hasSuffix("…"))
    }

    @Test func withoutARuleToAddThereIsNoAlwaysChoice() {
        var driver = SessionDriver()
        _ = driver.begin()
        let request =
            #"{"type":"control_request","request_id":"r-2","request":{"subtype":"can_use_tool","tool_name":"WebFetch","input":{"url":"https://example.com"},"permission_suggestions":[]}}"#
        guard case .approval(let ask)? = driver.feed(request).events().first else {
            Issue.record("no approval")
            return
        }
        #expect(ask.decisions == [.allowOnce, .deny] && ask.summary == "https://example.com")
    }
}
