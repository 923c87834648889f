import RelayCore
import Testing

@testable import LocalBridge

/// A live Claude Code's turns as the session state machine sees them, line by line.
@Suite struct ClaudeSessionTests {
    @Test func aTurnIsOneUserLineCarryingItsUUID() throws {
        var driver = SessionDriver()
        let actions = driver.session.start(turn: 1, text: "/compact keep the plan", uuid: "u-1", now: 0)
        #expect(actions.events() == [.typing(true)])
        let line = try #require(actions.written.first)
        #expect(line["type"] == .string("user") && line["uuid"] == .string("u-1") && line["parent_tool_use_id"] == .null)
        #expect(line["message"] == .object(["role": .string("user"), "content": .string("/compact keep the plan")]), "slash commands pass as text")
        guard case .write(let raw) = actions[1] else {
            Issue.record("\(actions)")
            return
        }
        #expect(raw.hasSuffix("}\n") && raw.dropLast().allSatisfy { $0 != "\n" }, "one line")
    }

    @Test func aWholeTurnStreamsShowsItsToolsAndEndsWithItsReportSessionAndAnswer() {
        var driver = SessionDriver()
        #expect(driver.begin().events() == [.typing(true)])
        var events = driver.feed(
            ClaudeLines.requesting,
            ClaudeLines.blockStart(0),
            ClaudeLines.delta("Let me "),
            ClaudeLines.delta("run it."),
            ClaudeLines.text("Let me run it."),
            ClaudeLines.blockStop(0),
            ClaudeLines.blockStart(1, type: "tool_use"),
            ClaudeLines.toolUse(),
            ClaudeLines.blockStop(1),
            ClaudeLines.toolResult(),
            ClaudeLines.blockStart(0),
            ClaudeLines.delta("Done."),
            ClaudeLines.text("Done.")
        ).events()
        let bash = ToolActivity(
            id: "toolu_1",
            name: "Bash",
            label: "touch ran1 && echo ok1",
            inputJSON: #"{"command":"touch ran1 && echo ok1","description":"touch"}"#
        )
        let ended = ToolActivity(id: "toolu_1", name: "Bash", label: "touch ran1 && echo ok1", success: true, result: "ok1")
        #expect(
            events == [
                .progress("Let me "), .progress("Let me run it."), .toolStarted(bash), .toolEnded(ended), .progress("Let me run it.\n\nDone."),
            ]
        )
        events = driver.feed(ClaudeLines.result("Done."), ClaudeLines.lifecycle("00000000-0000-4000-8000-000000000001", "completed")).events()
        let report = TurnReport(
            costUSD: 0.000188,
            inputTokens: 12,
            outputTokens: 7,
            cacheReadTokens: 40,
            cacheCreationTokens: 3,
            durationMillis: 276,
            modelTurns: 1,
            permissionDenials: 0,
            terminalReason: "completed"
        )
        #expect(events == [.report(report), .backendSession(ClaudeLines.session), .typing(false), .final("Let me run it.\n\nDone.")])
        #expect(driver.session.isIdle)
    }

    @Test func initListsClaudeCodesSlashCommandsBoundedAndWithoutTheSlash() {
        var driver = SessionDriver()
        #expect(driver.session.slashCommands == nil, "nothing is known before system/init")
        _ = driver.begin()
        #expect(driver.session.slashCommands == ["compact", "context"])
        let many = (0..<300).map { "\"c\($0)\"" }.joined(separator: ",")
        _ = driver.feed(
            #"{"type":"system","subtype":"init","session_id":"s","slash_commands":["/review","","has space",7,"\#(String(repeating: "x", count: 101))",\#(many)]}"#
        )
        let names = driver.session.slashCommands ?? []
        #expect(Array(names.prefix(2)) == ["review", "c0"] && names.count == ClaudeSession.maxSlashCommands)
    }

    @Test func theSessionIsToldOnlyOnceATurnRanAndOnlyWhenItChanged() {
        var driver = SessionDriver(ClaudeSession.Settings(resuming: ClaudeLines.session))
        _ = driver.begin()
        #expect(driver.feed(ClaudeLines.result("one")).events().contains(.backendSession(ClaudeLines.session)) == false, "resumed: known")
        _ = driver.begin(2, "/clear")
        let cleared = driver.feed(ClaudeLines.initLine(session: "s-new"), ClaudeLines.result("", session: "s-new")).events(2)
        #expect(cleared.contains(.backendSession("s-new")), "/clear starts a new session: it replaces the stored one")
        #expect(cleared.last == .final(""))
        #expect(driver.session.reportedSession == "s-new")
    }

    @Test func aTurnsCostIsItsOwnElseWhatTheProcessTotalGrew() {
        var driver = SessionDriver()
        _ = driver.begin()
        _ = driver.feed(ClaudeLines.result("one", total: 0.5, turnCost: 0.5))
        _ = driver.begin(2)
        let second = driver.feed(ClaudeLines.result("two", total: 0.75, turnCost: nil, index: 1)).events(2)
        guard case .report(let report)? = second.first else {
            Issue.record("\(second)")
            return
        }
        #expect(report.costUSD == 0.25)
    }

    @Test(arguments: [
        (529 as Int?, "API overloaded, retrying 2/10"), (500, "API error 500, retrying 2/10"), (429, "API rate limit reached, retrying 2/10"),
        (nil, "API unreachable, retrying 2/10"),
    ])
    func apiRetriesAreStatusLines(status: Int?, text: String) {
        var driver = SessionDriver()
        _ = driver.begin()
        #expect(driver.feed(ClaudeLines.apiRetry(attempt: 2, status: status)).events() == [.status(text)])
    }

    @Test func aSlashCommandsOwnOutputIsItsAnswer() {
        var driver = SessionDriver()
        _ = driver.begin(1, "/context")
        #expect(driver.feed(ClaudeLines.slashOutput).events().isEmpty, "Claude Code's own text does not stream")
        #expect(driver.feed(ClaudeLines.slashResult).events().last == .final("## Context Usage"))
    }

    @Test func withoutCommandLifecycleTheFirstResultIsTheOldestTurns() {
        var driver = SessionDriver()
        _ = driver.begin(1, "one", lifecycle: false)
        _ = driver.session.start(turn: 2, text: "two", uuid: "u-2", now: 0)
        #expect(driver.feed(ClaudeLines.text("first")).events(1) == [.progress("first")])
        #expect(driver.feed(ClaudeLines.result("first")).events(1).last == .final("first"))
        #expect(driver.feed(ClaudeLines.text("second"), ClaudeLines.result("second")).events(2).last == .final("second"))
    }

    @Test func unreadableLinesAreSkippedAndNamedWhenClaudeCodeDies() {
        var driver = SessionDriver()
        _ = driver.begin()
        #expect(driver.feed("not json at all", "[1, 2]", "   ", #"{"type":"rate_limit_event"}"#).isEmpty)
        let events = driver.session.exited(.exited(1), stderr: "fatal: boom").events()
        #expect(
            events == [
                .typing(false),
                .failed("Claude Code exited with status 1; 2 unreadable lines of output, the first: not json at all; stderr: fatal: boom"),
            ]
        )
    }

    @Test func anOverlongLineFailsTheTurnAndStopsTheProcess() {
        var driver = SessionDriver()
        _ = driver.begin()
        let actions = driver.session.overlongLine(now: 0)
        #expect(actions.events() == [.typing(false), .failed("a line of Claude Code's output is longer than 4 MiB")])
        #expect(actions.signals == [.terminate])
        #expect(driver.session.stopping)
    }

    @Test func anAnswerPastTheLimitFailsTheTurnAndInterruptsIt() {
        var driver = SessionDriver()
        _ = driver.begin()
        let big = String(repeating: "y", count: ClaudeAnswer.limit / 2 + 1)
        _ = driver.feed(ClaudeLines.text(big))
        let actions = driver.feed(ClaudeLines.text(big))
        #expect(actions.events().suffix(2) == [.typing(false), .failed("the answer is larger than 1 MiB")])
        #expect(actions.written.first?["request"]?["subtype"] == .string("interrupt"))
    }
}

@Suite struct ClaudeReadOnlyTests {
    @Test func aReadOnlyTurnSwitchesToPlanModeAndTheNextNormalOneBack() {
        var driver = SessionDriver()
        let planned = driver.session.start(turn: 1, text: "plan", readOnly: true, uuid: "u-1", now: 0).written
        #expect(planned.count == 2)
        let mode = planned[0]
        #expect(mode["request"]?["subtype"]?.stringValue == "set_permission_mode" && mode["request"]?["mode"]?.stringValue == "plan")
        #expect(driver.session.start(turn: 2, text: "more planning", readOnly: true, uuid: "u-2", now: 0).written.count == 1, "already in plan mode")
        let back = driver.session.start(turn: 3, text: "do it", uuid: "u-3", now: 0).written
        #expect(back[0]["request"]?["mode"]?.stringValue == "default")
    }
}
