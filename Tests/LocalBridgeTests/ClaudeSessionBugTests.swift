import RelayCore
import Testing

@testable import LocalBridge

/// Issue 24's bugs found with the real CLI, as the session state machine must handle them.
@Suite struct ClaudeSessionBugTests {
    static let gone = "0b8e7f3e-1111-4222-8333-944455556666"

    @Test func aGoneSessionIsForgottenAndTheFailureSaysWhy() {
        var driver = SessionDriver(ClaudeSession.Settings(resuming: Self.gone))
        _ = driver.session.start(turn: 1, text: "hello", uuid: "u-1", now: 0)
        let events = driver.feed(ClaudeLines.resumeRefused(Self.gone)).events()
        #expect(
            events == [
                .backendSession(nil), .typing(false),
                .failed(
                    "Claude Code could not resume session \(Self.gone): No conversation found with session ID: \(Self.gone); the next message starts a new session"
                ),
            ]
        )
        #expect(driver.session.reportedSession == nil, "the dead id is never stored again")
        #expect(driver.session.exited(.exited(1), stderr: "No conversation found with session ID: \(Self.gone)").isEmpty)
    }

    @Test func aResumeRefusedOnlyOnStderrIsForgottenToo() {
        var driver = SessionDriver(ClaudeSession.Settings(resuming: Self.gone))
        _ = driver.session.start(turn: 1, text: "hello", uuid: "u-1", now: 0)
        let events = driver.session.exited(.exited(1), stderr: "No conversation found with session ID: \(Self.gone)").events()
        #expect(events.first == .backendSession(nil))
        var other = SessionDriver(ClaudeSession.Settings(resuming: Self.gone))
        _ = other.session.start(turn: 1, text: "hello", uuid: "u-1", now: 0)
        #expect(other.session.exited(.exited(1), stderr: "out of memory").events().contains(.backendSession(nil)) == false)
    }

    @Test func aTurnAbortedRightAfterInitStoresNoSession() {
        var driver = SessionDriver()
        _ = driver.begin()
        let cancelled = driver.session.cancel(turn: 1, now: 50)
        #expect(cancelled.events().isEmpty)
        #expect(cancelled.written.first?["request"] == .object(["subtype": .string("interrupt")]))
        #expect(driver.feed(ClaudeLines.interruptAnswer, ClaudeLines.interruptedResult).events().isEmpty)
        #expect(driver.session.reportedSession == nil)
        #expect(driver.session.isIdle, "the process takes the next turn")
    }

    @Test func anAPIErrorFailsSayingSoAndItsTextNeverStreams() {
        var driver = SessionDriver()
        _ = driver.begin()
        let events = driver.feed(ClaudeLines.apiRetry(attempt: 1, status: 529), ClaudeLines.syntheticError, ClaudeLines.apiErrorResult).events()
        #expect(!events.contains { if case .progress = $0 { true } else { false } }, "\(events)")
        #expect(
            events.last
                == .failed("Claude Code API error 529: Overloaded. This is a server-side issue, usually temporary — try again in a moment.")
        )
        guard case .report(let report) = events[1] else {
            Issue.record("\(events)")
            return
        }
        #expect(report.terminalReason == "api_error" && report.costUSD == 0)
    }

    @Test func abortInterruptsThenTerminatesThenKills() {
        var settings = ClaudeSession.Settings()
        (settings.interruptGraceMillis, settings.terminateGraceMillis) = (1_000, 2_000)
        var driver = SessionDriver(settings)
        _ = driver.begin()
        _ = driver.feed(ClaudeLines.toolUse(command: "tail -f /dev/null"))
        #expect(driver.session.cancel(turn: 1, now: 0).written.count == 1)
        #expect(driver.session.nextDeadline == 1_000)
        #expect(driver.tick(at: 999).isEmpty)
        #expect(driver.tick(at: 1_000) == [.terminate], "Claude Code stops its tools on SIGTERM")
        #expect(driver.tick(at: 2_999).isEmpty)
        #expect(driver.tick(at: 3_000) == [.kill])
        #expect(driver.tick(at: 9_000).isEmpty)
    }

    @Test func anInterruptedTurnThatEndsInTimeIsNotSignalled() {
        var driver = SessionDriver()
        _ = driver.begin()
        _ = driver.session.cancel(turn: 1, now: 0)
        _ = driver.feed(ClaudeLines.interruptedResult)
        #expect(driver.tick(at: 60_000).isEmpty)
        #expect(driver.session.nextDeadline == nil)
    }

    @Test func timeoutsFailTheTurnAndInterruptIt() {
        var settings = ClaudeSession.Settings()
        (settings.inactivityMillis, settings.maxTurnMillis) = (1_000, 5_000)
        var quiet = SessionDriver(settings)
        _ = quiet.begin()
        _ = quiet.tick(at: 800)
        _ = quiet.feed(ClaudeLines.requesting)
        #expect(quiet.tick(at: 1_799).isEmpty, "output resets the inactivity timer")
        let ended = quiet.tick(at: 1_800)
        #expect(ended.events() == [.typing(false), .failed("no output for 1 s")])
        #expect(ended.written.first?["request"]?["subtype"] == .string("interrupt"))

        var long = SessionDriver(settings)
        _ = long.begin()
        for time in stride(from: Int64(900), to: 5_000, by: 900) {
            _ = long.tick(at: time)
            _ = long.feed(ClaudeLines.requesting)
        }
        #expect(long.tick(at: 5_000).events() == [.typing(false), .failed("ran longer than 5 s")])
    }

    @Test func aSubagentsTextNeverLandsInTheAnswerButItsToolsShow() {
        var driver = SessionDriver()
        _ = driver.begin()
        let events = driver.feed(
            ClaudeLines.text("Delegating."),
            ClaudeLines.delta("sub text", parent: "toolu_task"),
            ClaudeLines.text("subagent findings", parent: "toolu_task"),
            ClaudeLines.toolUse("toolu_sub", command: "ls", parent: "toolu_task"),
            ClaudeLines.text("Main answer.")
        ).events()
        #expect(events.first == .progress("Delegating."))
        #expect(events.contains { if case .toolStarted(let tool) = $0 { tool.id == "toolu_sub" } else { false } })
        #expect(driver.feed(ClaudeLines.result("Main answer.")).events().last == .final("Delegating.\n\nMain answer."))
    }

    @Test func aBackgroundAgentsTurnAndResultBelongToNoTurn() {
        var driver = SessionDriver()
        _ = driver.begin()
        _ = driver.feed(ClaudeLines.text("main answer"), ClaudeLines.result("main answer"))
        // The agent finished after the turn: Claude Code answers it on its own, while the next
        // user line waits in its queue.
        _ = driver.session.start(turn: 2, text: "next", uuid: "u-2", now: 0)
        let background = driver.feed(
            ClaudeLines.lifecycle("u-2", "queued"),
            ClaudeLines.requesting,
            ClaudeLines.text("The agent reported back."),
            ClaudeLines.result("The agent reported back.", index: 1)
        )
        #expect(background.events(2).isEmpty, "\(background)")
        let mine = driver.feed(
            ClaudeLines.lifecycle("u-2", "started"),
            ClaudeLines.text("claude: next"),
            ClaudeLines.result("claude: next", index: 2)
        )
        #expect(mine.events(2).last == .final("claude: next"))
    }

    @Test func partialMessagesAreOnByDefault() {
        let arguments = ClaudeCodeOptions().arguments(resuming: nil)
        #expect(arguments.contains("--include-partial-messages"))
    }
}
