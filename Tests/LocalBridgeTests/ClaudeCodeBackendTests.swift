import Foundation
import RelayCore
import Testing

@testable import LocalBridge

/// The claude-code backend running `Tests/fixtures/claude-code/claude` as a real child process.
@Suite struct ClaudeCodeBackendTests {
    static let first = "Let me look around first."

    @Test func aTurnStreamsTextToolsAndTheSessionThenAnswers() async throws {
        let fixture = try ClaudeFixture()
        defer { fixture.remove() }
        let events = await TurnRecorder.run(fixture.backend(extra: ["--model", "sonnet"], workingDirectory: fixture.directory), text: "hello")
        let answer = "\(Self.first)\n\nclaude: hello"
        let session = try #require(events.sessions.first ?? nil)
        #expect(session.hasPrefix("fixture-"))
        let bash = ToolActivity(
            id: "toolu_01",
            name: "Bash",
            label: "pwd",
            inputJSON: #"{"command":"pwd","description":"Print the working directory"}"#
        )
        let read = ToolActivity(
            id: "toolu_02",
            name: "Read",
            label: fixture.directory + "/missing.txt",
            inputJSON: #"{"file_path":"\#(fixture.directory)/missing.txt"}"#
        )
        var bashEnded = bash
        (bashEnded.inputJSON, bashEnded.success) = ("{}", true)
        var readEnded = read
        (readEnded.inputJSON, readEnded.success) = ("{}", false)
        let expected: [TurnEvent] = [
            .typing(true), .backendSession(session), .progress(Self.first), .toolStarted(bash), .toolEnded(bashEnded), .toolStarted(read),
            .toolEnded(readEnded), .progress(answer), .typing(false), .final(answer),
        ]
        #expect(events.withoutRepeats == expected)
        let run = try #require(try fixture.runs().first)
        #expect(run.argv == ["-p", "--output-format", "stream-json", "--verbose", "--model", "sonnet", "--", "hello"])
        #expect(run.resume == nil)
        #expect(
            URL(fileURLWithPath: run.cwd).resolvingSymlinksInPath().path == URL(fileURLWithPath: fixture.directory).resolvingSymlinksInPath().path
        )
    }

    @Test func theNextTurnResumesTheSessionAndReportsTheNewOne() async throws {
        let fixture = try ClaudeFixture()
        defer { fixture.remove() }
        let events = await TurnRecorder.run(fixture.backend(), text: "again", backendSession: "fixture-earlier")
        #expect(events.last == .final("\(Self.first)\n\nclaude: again (resumed fixture-earlier)"))
        #expect(events.sessions.count == 1 && events.sessions.first != "fixture-earlier")
        let run = try #require(try fixture.runs().first)
        #expect(run.resume == "fixture-earlier")
        #expect(run.argv.suffix(4) == ["--resume", "fixture-earlier", "--", "again"])
    }

    @Test func theTextIsOneArgumentNeverAnOption() async throws {
        let fixture = try ClaudeFixture()
        defer { fixture.remove() }
        let text = "--dangerously-skip-permissions; echo $(whoami) \"quoted\"\nsecond line"
        let events = await TurnRecorder.run(fixture.backend(), text: text)
        #expect(events.last == .final("\(Self.first)\n\nclaude: \(text)"))
        #expect(try fixture.runs().first?.prompt == text)
    }

    @Test func partialMessagesStreamGrowingText() async throws {
        let fixture = try ClaudeFixture()
        defer { fixture.remove() }
        let events = await TurnRecorder.run(fixture.backend(mode: "partial"), text: "deltas")
        #expect(events.last == .final("\(Self.first)\n\nclaude: deltas"))
        let progress = events.compactMap(\.progressText)
        #expect(!progress.isEmpty)
        for (earlier, later) in zip(progress, progress.dropFirst()) { #expect(later.hasPrefix(earlier), "\(earlier) → \(later)") }
    }

    @Test(arguments: [
        ("error", "Claude Code reported error_during_execution"),
        ("max-turns", "Claude Code reported error_max_turns"),
        ("garbage", "Claude Code ended without a result; 1 unreadable line of output, the first: this line is not JSON"),
        ("exit", "Claude Code exited with status 3 without a result; stderr: fatal: the fixture was told to fail"),
        ("oversize", "a line of Claude Code's output is longer than 4 MiB"),
    ])
    func failureModes(mode: String, reason: String) async throws {
        let fixture = try ClaudeFixture()
        defer { fixture.remove() }
        let events = await TurnRecorder.run(fixture.backend(mode: mode), text: "fail")
        #expect(events.first == .typing(true))
        #expect(events.suffix(2) == [.typing(false), .failed(reason)])
    }

    @Test func garbageBeforeAResultIsHarmless() async throws {
        let fixture = try ClaudeFixture()
        defer { fixture.remove() }
        let events = await TurnRecorder.run(fixture.backend(mode: "garbage-ok"), text: "fine")
        #expect(events.last == .final("\(Self.first)\n\nclaude: fine"))
    }

    @Test func aRefusedResumeForgetsTheSession() async throws {
        let fixture = try ClaudeFixture()
        defer { fixture.remove() }
        let events = await TurnRecorder.run(fixture.backend(mode: "unknown-session"), text: "hi", backendSession: "fixture-gone")
        #expect(events.sessions == [nil])
        guard case .failed(let reason)? = events.last else {
            Issue.record("expected a failure: \(events)")
            return
        }
        #expect(reason.hasPrefix("could not resume Claude Code session fixture-gone"))
        #expect(reason.contains("No conversation found with session ID: fixture-gone"))
    }

    @Test func workingDirectoryFallsBackToTheBackendsAndAMissingOneFailsWithoutRunning() async throws {
        let fixture = try ClaudeFixture()
        defer { fixture.remove() }
        let backend = fixture.backend(workingDirectory: fixture.directory)
        _ = await TurnRecorder.run(backend, text: "where")
        let ran = try #require(try fixture.runs().first)
        #expect(URL(fileURLWithPath: ran.cwd).resolvingSymlinksInPath() == URL(fileURLWithPath: fixture.directory).resolvingSymlinksInPath())
        let missing = fixture.directory + "/gone"
        let events = await TurnRecorder.run(backend, text: "where", workingDirectory: missing)
        #expect(events == [.typing(true), .typing(false), .failed("the working directory \(missing) does not exist")])
        #expect(try fixture.runs().count == 1, "nothing ran")
    }

    @Test func cancelKillsTheProcessGroupAndStaysSilent() async throws {
        let fixture = try ClaudeFixture()
        defer { fixture.remove() }
        let recorder = TurnRecorder(fixture.backend(mode: "hang", timeout: 60), text: "wait")
        var iterator = recorder.events.makeAsyncIterator()
        while let event = await iterator.next(), event != .progress(Self.first) {}
        let run = try #require(try fixture.runs().first)
        let pids = [run.pid, try #require(run.helper)]
        #expect(pids.allSatisfy(ClaudeFixture.isAlive))
        recorder.cancellation.cancel()
        #expect(await ClaudeFixture.waitGone(pids), "the fixture and the process it started are killed")
        let rest = await events(of: recorder.events, within: .milliseconds(300))
        #expect(rest.isEmpty, "no event after cancel: \(rest)")
    }

    @Test func aChildThatLingersAfterItsResultIsKilledAndTheAnswerStands() async throws {
        let fixture = try ClaudeFixture()
        defer { fixture.remove() }
        let events = await TurnRecorder.run(fixture.backend(mode: "linger", exitGraceMillis: 200), text: "linger")
        #expect(events.last == .final("\(Self.first)\n\nclaude: linger"))
        let run = try #require(try fixture.runs().first)
        #expect(await ClaudeFixture.waitGone([run.pid]))
    }

    @Test func aMissingProgramFails() async {
        let backend = ClaudeCodeBackend(name: "claude", command: ["/nonexistent/claude"], timeoutSeconds: 5)
        let events = await TurnRecorder.run(backend, text: "hello")
        guard case .failed(let reason)? = events.last else {
            Issue.record("expected a failure: \(events)")
            return
        }
        #expect(reason.hasPrefix("cannot start /nonexistent/claude"))
    }
}
