import Foundation
import RelayCore
import Testing

@testable import LocalBridge

@Suite struct CommandBackendTests {
    private func shell(_ script: String, timeout: Int = 20, environment: [String: String] = [:]) -> CommandBackend {
        CommandBackend(name: "sh", command: ["/bin/sh", "-c", script], timeoutSeconds: timeout, environment: environment)
    }

    @Test func streamsOutputAndAnswers() async {
        let events = await TurnRecorder.run(shell("printf a; printf b"), text: "")
        let progress = expectTurnShape(events)
        #expect(events.last == .final("ab"))
        #expect(!progress.isEmpty)
        #expect(progress.last == "ab")
    }

    @Test func reportsEachChunkAsItArrives() async {
        let events = await TurnRecorder.run(shell("printf a; sleep 0.3; printf b"), text: "")
        #expect(expectTurnShape(events) == ["a", "ab"])
        #expect(events.last == .final("ab"))
    }

    @Test func passesTextOnStdinAndTrimsOneNewline() async {
        let events = await TurnRecorder.run(CommandBackend(name: "cat", command: ["cat"], timeoutSeconds: 20), text: "hi there\n\n")
        _ = expectTurnShape(events)
        #expect(events.last == .final("hi there\n"))
    }

    @Test func passesEnvironment() async {
        let backend = shell(#"printf '%s-%s' "$GREETING" "$CLAWRELAY_CONVERSATION_ID""#, environment: ["GREETING": "hi"])
        let events = await TurnRecorder.run(backend, text: "")
        #expect(events.last == .final("hi-conv-1"))
    }

    @Test func runsInTheConversationsWorkingDirectoryWhenItExists() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("clawrelay-wd-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = shell(#"printf '%s|%s' "$CLAWRELAY_WORKING_DIRECTORY" "$(pwd -P)""#)
        let here = await TurnRecorder.run(script, text: "", workingDirectory: directory)
        let real = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        #expect(here.last == .final("\(directory)|\(real)"))
        let missing = await TurnRecorder.run(script, text: "", workingDirectory: directory + "/not-there")
        guard case .final(let answer)? = missing.last else {
            Issue.record("expected an answer: \(missing)")
            return
        }
        #expect(answer.hasPrefix(directory + "/not-there|"), "the variable is set even when the directory does not exist")
        #expect(!answer.hasSuffix("/not-there"))
    }

    @Test func nonZeroExitFails() async {
        let events = await TurnRecorder.run(shell("cat; exit 3"), text: "ignored")
        _ = expectTurnShape(events)
        #expect(events.last == .failed("exit status 3"))
    }

    @Test func crashFails() async {
        let events = await TurnRecorder.run(shell("kill -9 $$"), text: "")
        #expect(events.last == .failed("killed by signal 9"))
    }

    @Test func missingProgramFails() async {
        let backend = CommandBackend(name: "none", command: ["/nonexistent/clawrelay-backend"], timeoutSeconds: 5)
        let events = await TurnRecorder.run(backend, text: "hello")
        #expect(events.first == .typing(true))
        guard case .failed(let reason) = events.last else {
            Issue.record("expected a failure, got \(events)")
            return
        }
        #expect(reason.hasPrefix("cannot start /nonexistent/clawrelay-backend"))
    }

    @Test func timeoutKillsTheProcessGroup() async {
        let clock = ContinuousClock()
        let started = clock.now
        // The shell's child `sleep` holds stdout too: only killing the group ends the turn promptly.
        let events = await TurnRecorder.run(shell("sleep 30; echo late", timeout: 1), text: "")
        let elapsed = clock.now - started
        _ = expectTurnShape(events)
        #expect(events.last == .failed("no output for 1 s"))
        // Far below the child's 30 s: only a group kill ends it this soon (no tighter bound: these
        // machines are shared, and speed is the benchmark's business).
        #expect(elapsed >= .seconds(1) && elapsed < .seconds(25))
    }

    /// `timeout_seconds` is about silence: a child that keeps writing runs on until `max_seconds`.
    @Test func outputKeepsATurnAliveUntilMaxSeconds() async {
        let clock = ContinuousClock()
        let started = clock.now
        let backend = CommandBackend(
            name: "ticker",
            command: ["/bin/sh", "-c", "while true; do echo tick; sleep 0.3; done"],
            timeoutSeconds: 1,
            maxSeconds: 2
        )
        let events = await TurnRecorder.run(backend, text: "")
        let elapsed = clock.now - started
        #expect(events.last == .failed("ran longer than 2 s"))
        #expect(elapsed >= .seconds(2) && elapsed < .seconds(25))
    }

    @Test func backgroundChildDoesNotHoldTheTurn() async {
        let clock = ContinuousClock()
        let started = clock.now
        let events = await TurnRecorder.run(shell("sleep 30 & printf done"), text: "")
        #expect(events.last == .final("done"))
        #expect(clock.now - started < .seconds(25), "the background sleep (30 s) does not hold the turn")
    }

    @Test func largeOutputFails() async {
        let events = await TurnRecorder.run(shell("head -c 2000000 /dev/zero"), text: "")
        _ = expectTurnShape(events)
        #expect(events.last == .failed("output too large"))
    }

    @Test func endlessOutputFails() async {
        let events = await TurnRecorder.run(shell("yes"), text: "")
        #expect(events.last == .failed("output too large"))
    }

    @Test func concurrentTurnsDoNotHoldEachOther() async {
        let backend = shell(#"cat; sleep 0.2; printf '!'"#)
        let finals = await withTaskGroup(of: TurnEvent?.self) { group in
            for index in 0..<8 { group.addTask { await TurnRecorder.run(backend, text: "turn \(index)").last } }
            var finals: [TurnEvent] = []
            for await final in group { finals.append(final ?? .failed("no events")) }
            return finals
        }
        #expect(Set(finals.map { "\($0)" }) == Set((0..<8).map { "\(TurnEvent.final("turn \($0)!"))" }))
    }

    @Test func outputAtTheLimitSucceeds() async {
        let events = await TurnRecorder.run(shell("head -c 1048576 /dev/zero | tr '\\0' x"), text: "")
        #expect(events.last == .final(String(repeating: "x", count: 1_048_576)))
    }

    @Test func childIgnoringLargeInputStillAnswers() async {
        let events = await TurnRecorder.run(shell("printf ok"), text: String(repeating: "y", count: 500_000))
        #expect(events.last == .final("ok"))
    }

    @Test func cancelKillsAndStaysSilent() async {
        let recorder = TurnRecorder(shell("printf x; sleep 30", timeout: 60), text: "")
        var iterator = recorder.events.makeAsyncIterator()
        #expect(await iterator.next() == .typing(true))
        #expect(await iterator.next() == .progress("x"))
        recorder.cancellation.cancel()
        let rest = await events(of: recorder.events, within: .milliseconds(500))
        #expect(rest.isEmpty, "no event after cancel: \(rest)")
    }

    @Test func cutMultiByteCharacterWaitsForTheRest() {
        let euro = Array("€".utf8)
        #expect(OutputText.completeUTF8Prefix(Array("a".utf8) + euro.prefix(2)) == 1)
        #expect(OutputText.completeUTF8Prefix(Array("a".utf8) + euro) == 4)
        #expect(OutputText.completeUTF8Prefix([]) == 0)
        #expect(OutputText.text(of: Array("é\r\n".utf8), trimmingNewline: true) == "é")
    }
}
