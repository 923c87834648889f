import RelayCore
import Testing

@testable import LocalBridge

@Suite struct EchoBackendTests {
    @Test func answersWithStreamedEcho() async {
        let events = await TurnRecorder.run(EchoBackend(name: "echo", delayMillis: 0), text: "hello brave world")
        let progress = expectTurnShape(events)
        #expect(events.last == .final("echo: hello brave world"))
        #expect(progress.first == "echo:")
        #expect(progress.last == "echo: hello brave world")
        #expect(progress.count >= 2)
    }

    @Test func oneCharacterStillStreamsTwice() async {
        let events = await TurnRecorder.run(EchoBackend(name: "echo", delayMillis: 0), text: "x")
        #expect(expectTurnShape(events) == ["echo:", "echo: x"])
        #expect(events.last == .final("echo: x"))
    }

    @Test func emptyText() async {
        let events = await TurnRecorder.run(EchoBackend(name: "echo", delayMillis: 0), text: "")
        #expect(expectTurnShape(events).count >= 2)
        #expect(events.last == .final("echo: "))
    }

    @Test func waitsBeforeEachStep() async {
        let clock = ContinuousClock()
        let started = clock.now
        let events = await TurnRecorder.run(EchoBackend(name: "slow", delayMillis: 20), text: "a b")
        let elapsed = clock.now - started
        #expect(expectTurnShape(events) == ["echo:", "echo: a", "echo: a b"])
        #expect(events.last == .final("echo: a b"))
        // Three progress steps and the final answer, each after 20 ms.
        #expect(elapsed >= .milliseconds(80))
    }

    @Test func cancelStopsTheTurn() async {
        // The first step is ten seconds away, so even a loaded machine cancels before it is due.
        let recorder = TurnRecorder(EchoBackend(name: "slow", delayMillis: 10_000), text: "never finished")
        var iterator = recorder.events.makeAsyncIterator()
        #expect(await iterator.next() == .typing(true))
        recorder.cancellation.cancel()
        recorder.cancellation.cancel()
        let rest = await events(of: recorder.events, within: .milliseconds(1_500))
        #expect(!rest.contains { $0.isEnd })
        #expect(rest.count <= 1, "at most the event already in flight: \(rest)")
    }

    @Test func longTextStreamsInBoundedSteps() {
        let text = (1...50).map { "w\($0)" }.joined(separator: " ")
        let progress = EchoBackend.progressTexts(for: text)
        #expect(progress.count == 9)
        #expect(progress.last == "echo: " + text)
        for (earlier, later) in zip(progress, progress.dropFirst()) { #expect(later.hasPrefix(earlier) && later != earlier) }
    }
}
