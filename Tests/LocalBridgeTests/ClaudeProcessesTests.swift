import RelayCore
import Synchronization
import Testing

@testable import LocalBridge

/// A process the test drives instead of Claude Code: it records what it is told, and finishes
/// turns or goes idle when the test says.
final class FakeClaudeProcess: ClaudeProcessHandle {
    let conversationID: String
    let launch: ClaudeLaunch
    let hooks: ClaudeProcessHooks
    private struct State {
        var inputs: [ClaudeProcessInput] = []
        var assigned = 0
        var finished = 0
        var lastUsed: UInt64 = 0
        var over = false
        var session: String?
        var started = false
    }
    private let state: Mutex<State>

    init(conversationID: String, launch: ClaudeLaunch, hooks: ClaudeProcessHooks) {
        self.conversationID = conversationID
        self.launch = launch
        self.hooks = hooks
        state = Mutex(State(session: launch.session.resuming))
    }

    var isBusy: Bool { state.withLock { $0.assigned != $0.finished } }
    var lastUsed: UInt64 { state.withLock(\.lastUsed) }
    var isOver: Bool { state.withLock(\.over) }
    var reportedSession: String? { state.withLock(\.session) }
    var inputs: [ClaudeProcessInput] { state.withLock(\.inputs) }
    var started: Bool { state.withLock(\.started) }

    func assign(use: UInt64) {
        state.withLock { state in
            state.assigned += 1
            state.lastUsed = use
        }
    }

    func markOver() { state.withLock { $0.over = true } }

    func post(_ input: ClaudeProcessInput) {
        state.withLock { $0.inputs.append(input) }
        if case .stop = input { hooks.ended() }
    }

    func startThread() { state.withLock { $0.started = true } }

    /// The turns it was given are done; it told the relay `session`.
    func finishTurns(session: String?) {
        state.withLock { state in
            state.finished = state.assigned
            state.session = session
        }
    }

    var stops: [Bool] { inputs.compactMap { if case .stop(let terminate) = $0 { terminate } else { nil } } }
    var startedTexts: [String] { inputs.compactMap { if case .start(_, let text, _, _) = $0 { text } else { nil } } }
}

@Suite struct ClaudeProcessesTests {
    final class Made: Sendable {
        let all = Mutex<[FakeClaudeProcess]>([])
        var list: [FakeClaudeProcess] { all.withLock { $0 } }
    }

    private func manager(max: Int = 2) -> (ClaudeProcesses, Made) {
        let made = Made()
        let plan = ClaudeProcesses.Plan(
            maxProcesses: max,
            idleMillis: 600_000,
            session: ClaudeSession.Settings(),
            environment: [],
            arguments: { session, effort in ["claude"] + (session.map { ["--resume", $0] } ?? []) + (effort.map { ["--effort", $0] } ?? []) }
        )
        let processes = ClaudeProcesses(plan: plan, logger: nil) { conversation, launch, hooks in
            let process = FakeClaudeProcess(conversationID: conversation, launch: launch, hooks: hooks)
            made.all.withLock { $0.append(process) }
            return process
        }
        return (processes, made)
    }

    private func turn(_ conversation: String, _ text: String = "hi", session: String? = nil) -> TurnRequest {
        TurnRequest(userID: "u", deviceID: "d", conversationID: conversation, text: text, backendSession: session)
    }

    @Test func aConversationKeepsItsProcessWhileItHoldsTheConversationsSession() throws {
        let (processes, made) = manager()
        _ = processes.start(turn("c1", "one"), directory: "/srv") { _ in }
        let first = try #require(made.list.first)
        #expect(first.started && first.launch.arguments == ["claude"] && first.launch.directory == "/srv")
        first.finishTurns(session: "s-1")
        _ = processes.start(turn("c1", "two", session: "s-1"), directory: "/srv") { _ in }
        #expect(made.list.count == 1 && first.startedTexts == ["one", "two"])

        first.finishTurns(session: "s-1")
        _ = processes.start(turn("c1", "three", session: nil), directory: "/srv") { _ in }
        #expect(made.list.count == 2, "the conversation's session was forgotten: a new process")
        #expect(first.stops == [false] && first.isOver)
        _ = processes.start(turn("c1", "four", session: nil), directory: "/other") { _ in }
        #expect(made.list.count == 3, "another directory: another process")
    }

    @Test func aThinkingLevelRunsWithItsEffortAndAChangeStartsAProcessThatResumes() throws {
        let (processes, made) = manager()
        var thinking = turn("c1", "one")
        thinking.settings.thinkingLevel = "high"
        _ = processes.start(thinking, directory: nil) { _ in }
        let first = try #require(made.list.first)
        #expect(first.launch.arguments == ["claude", "--effort", "high"] && first.launch.effort == "high")
        first.finishTurns(session: "s-1")
        thinking.backendSession = "s-1"
        _ = processes.start(thinking, directory: nil) { _ in }
        #expect(made.list.count == 1, "the same level: the same process")
        first.finishTurns(session: "s-1")
        thinking.settings.thinkingLevel = "minimal"
        _ = processes.start(thinking, directory: nil) { _ in }
        #expect(made.list.count == 2 && first.stops == [false], "another level: the old process stops")
        #expect(made.list[1].launch.arguments == ["claude", "--resume", "s-1", "--effort", "low"], "and the new one resumes the session")
    }

    @Test func aNewProcessResumesTheConversationsSession() throws {
        let (processes, made) = manager()
        _ = processes.start(turn("c1", session: "s-9"), directory: nil) { _ in }
        let process = try #require(made.list.first)
        #expect(process.launch.arguments == ["claude", "--resume", "s-9"] && process.launch.session.resuming == "s-9")
    }

    @Test func atTheLimitTheLeastRecentlyUsedIdleProcessStops() throws {
        let (processes, made) = manager(max: 2)
        _ = processes.start(turn("c1"), directory: nil) { _ in }
        _ = processes.start(turn("c2"), directory: nil) { _ in }
        for process in made.list { process.finishTurns(session: nil) }
        _ = processes.start(turn("c2"), directory: nil) { _ in }  // c2 is now the more recently used
        made.list[1].finishTurns(session: nil)
        _ = processes.start(turn("c3"), directory: nil) { _ in }
        #expect(made.list.count == 3 && processes.count == 2)
        #expect(made.list[0].stops == [false], "c1, used least recently, stops")
        #expect(made.list[1].stops.isEmpty)
    }

    @Test func whenEveryProcessIsBusyTheTurnFailsSayingWhy() {
        let (processes, made) = manager(max: 1)
        _ = processes.start(turn("c1"), directory: nil) { _ in }
        let events = Mutex<[TurnEvent]>([])
        _ = processes.start(turn("c2"), directory: nil) { event in events.withLock { $0.append(event) } }
        #expect(made.list.count == 1)
        #expect(
            events.withLock { $0 }.last
                == .failed(
                    "all 1 Claude Code processes are busy with other conversations' turns (max_processes = 1); try again when one of them is done"
                )
        )
    }

    @Test func anIdleProcessMayRetireUnlessATurnIsOnItsWay() throws {
        let (processes, made) = manager()
        _ = processes.start(turn("c1"), directory: nil) { _ in }
        let process = try #require(made.list.first)
        #expect(process.hooks.mayRetire(process) == false, "busy")
        process.finishTurns(session: nil)
        #expect(process.hooks.mayRetire(process))
        #expect(processes.count == 0 && process.isOver)
        _ = processes.start(turn("c1"), directory: nil) { _ in }
        #expect(made.list.count == 2, "the next turn starts a new one")
    }

    @Test func anExitedProcessIsForgotten() throws {
        let (processes, made) = manager()
        _ = processes.start(turn("c1"), directory: nil) { _ in }
        let process = try #require(made.list.first)
        process.markOver()
        process.hooks.exited(process)
        #expect(processes.count == 0)
    }

    @Test func theHandleAnswersAndCancelsInTheProcess() throws {
        let (processes, made) = manager()
        let handle = processes.start(turn("c1"), directory: nil) { _ in }
        handle.answer("req-1", .allow(always: true))
        handle.cancel()
        let inputs = try #require(made.list.first).inputs
        guard inputs.count == 3, case .start(let sink, _, _, _) = inputs[0], case .answer(let turn, "req-1", .allow(always: true)) = inputs[1],
            case .cancel(let cancelled) = inputs[2]
        else {
            Issue.record("\(inputs)")
            return
        }
        #expect(turn == sink.id && cancelled == sink.id && sink.isClosed)
    }

    @Test func stoppingTerminatesEveryProcessAndRefusesNewTurns() {
        let (processes, made) = manager()
        _ = processes.start(turn("c1"), directory: nil) { _ in }
        _ = processes.start(turn("c2"), directory: nil) { _ in }
        processes.stopAll(within: .seconds(5))
        #expect(made.list.allSatisfy { $0.stops == [true] })
        let events = Mutex<[TurnEvent]>([])
        _ = processes.start(turn("c3"), directory: nil) { event in events.withLock { $0.append(event) } }
        #expect(events.withLock { $0 }.last == .failed("the relay is stopping"))
    }
}
