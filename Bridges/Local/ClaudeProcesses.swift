import Foundation
import Logging
import RelayCore
import Synchronization

/// The live Claude Code processes, one per conversation that is in use, at most `maxProcesses`.
///
/// A conversation's turns go to its process while it lives and still holds the session the
/// conversation has (and works in its directory); otherwise a new one starts, resuming that
/// session. An idle process stops after its idle time; when a new one is needed and all the
/// places are taken, the least recently used idle one is stopped. When every process is busy with
/// a turn (or an approval), the new turn fails at once, saying so: waiting would hide the reason
/// behind a timeout.
///
/// - Important: Safe from any thread; the table's lock is taken before a process's own.
final class ClaudeProcesses: Sendable {
    /// How a process is started for a conversation.
    struct Plan: Sendable {
        var maxProcesses: Int
        var idleMillis: Int64
        var session: ClaudeSession.Settings
        var environment: [String]
        /// The command line, resuming a session or not, with an `--effort` or not.
        var arguments: @Sendable (_ resuming: String?, _ effort: String?) -> [String]
    }

    private struct Table: Sendable {
        var processes: [String: any ClaudeProcessHandle] = [:]
        var uses: UInt64 = 0
        var nextTurn = 0
        var stopping = false
    }

    private let plan: Plan
    private let logger: Logger?
    private let table = Mutex(Table())
    private let noted = Mutex<String?>(nil)
    private let listed = Mutex<[String]>([])
    private let threads = DispatchGroup()
    private let factory: Factory

    /// Makes a process (a test passes a stand-in).
    typealias Factory = @Sendable (_ conversationID: String, ClaudeLaunch, ClaudeProcessHooks) -> any ClaudeProcessHandle

    init(plan: Plan, logger: Logger?, factory: @escaping Factory = { ClaudeProcess(conversationID: $0, launch: $1, hooks: $2) }) {
        self.plan = plan
        self.logger = logger
        self.factory = factory
    }

    /// The Claude Code version the processes reported last.
    var version: String? { noted.withLock { $0 } }

    func noteVersion(_ version: String) { noted.withLock { $0 = version } }

    /// Claude Code's slash commands as the processes listed them last.
    var slashCommands: [String] { listed.withLock { $0 } }

    func noteSlashCommands(_ names: [String]) { listed.withLock { $0 = names } }

    /// How many processes live (for tests and metrics).
    var count: Int { table.withLock { $0.processes.count } }

    private enum Placement {
        case placed(any ClaudeProcessHandle, ClaudeTurnSink)
        case busy
        case stopping

        var isStopping: Bool {
            if case .stopping = self { return true }
            return false
        }
    }

    /// Runs `turn` in the conversation's process, starting one if needed.
    func start(_ turn: TurnRequest, directory: String?, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle {
        var victims: [any ClaudeProcessHandle] = []
        var created: (any ClaudeProcessHandle)?
        let placement = table.withLock { table -> Placement in
            guard !table.stopping else { return .stopping }
            table.nextTurn += 1
            table.uses += 1
            let sink = ClaudeTurnSink(id: table.nextTurn, events: events)
            if let current = table.processes[turn.conversationID] {
                if Self.fits(current, turn: turn, directory: directory) { return .placed(Self.assign(current, use: table.uses), sink) }
                table.processes[turn.conversationID] = nil
                victims.append(current)
            }
            if table.processes.count >= plan.maxProcesses {
                let idle = table.processes.values.filter { !$0.isBusy }
                guard let oldest = idle.min(by: { $0.lastUsed < $1.lastUsed }) else { return .busy }
                table.processes[oldest.conversationID] = nil
                victims.append(oldest)
            }
            let process = makeProcess(for: turn, directory: directory)
            table.processes[turn.conversationID] = process
            created = process
            return .placed(Self.assign(process, use: table.uses), sink)
        }
        for victim in victims {
            victim.markOver()
            victim.post(.stop(terminate: false))
        }
        guard case .placed(let process, let sink) = placement else { return refuse(events, stopping: placement.isStopping) }
        if let created {
            threads.enter()
            created.startThread()
        }
        process.post(.start(sink, text: turn.text, attachments: turn.attachments, readOnly: turn.readOnly))
        return TurnHandle(
            answer: { requestID, answer in process.post(.answer(turn: sink.id, requestID: requestID, answer)) },
            cancel: {
                sink.cancel()
                process.post(.cancel(turn: sink.id))
            }
        )
    }

    /// Stops the conversation's process, if it has one (closing its input: it ends its turn's tools
    /// as it exits).
    func stop(conversationID: String) {
        let process = table.withLock { $0.processes.removeValue(forKey: conversationID) }
        process?.markOver()
        process?.post(.stop(terminate: false))
    }

    /// Stops every process (the relay stops): SIGTERM at once, so their tools stop too, and
    /// waits for them up to `limit`.
    func stopAll(within limit: Duration) {
        let all = table.withLock { table in
            table.stopping = true
            defer { table.processes = [:] }
            return Array(table.processes.values)
        }
        for process in all {
            process.markOver()
            process.post(.stop(terminate: true))
        }
        _ = threads.wait(timeout: .now() + .milliseconds(Int(limit / .milliseconds(1))))
    }

    private func refuse(_ events: @Sendable (TurnEvent) -> Void, stopping: Bool) -> TurnHandle {
        events(.typing(true))
        events(.typing(false))
        if stopping {
            events(.failed("the relay is stopping"))
        } else {
            events(
                .failed(
                    "all \(plan.maxProcesses) Claude Code processes are busy with other conversations' turns (max_processes = \(plan.maxProcesses)); try again when one of them is done"
                )
            )
        }
        return TurnHandle {}
    }

    /// Whether the conversation's process can take the turn: alive, in the same directory, with
    /// the effort the conversation's thinking level asks for, and holding the session the
    /// conversation has (a conversation whose session was forgotten or replaced, or whose thinking
    /// level changed, gets a new process, which resumes the session).
    private static func fits(_ process: any ClaudeProcessHandle, turn: TurnRequest, directory: String?) -> Bool {
        process.launch.directory == directory && !process.isOver && process.reportedSession == turn.backendSession
            && process.launch.effort == ClaudeCodeOptions.effort(thinkingLevel: turn.settings.thinkingLevel)
    }

    private static func assign(_ process: any ClaudeProcessHandle, use: UInt64) -> any ClaudeProcessHandle {
        process.assign(use: use)
        return process
    }

    private func makeProcess(for turn: TurnRequest, directory: String?) -> any ClaudeProcessHandle {
        var session = plan.session
        session.directory = directory
        session.resuming = turn.backendSession
        let effort = ClaudeCodeOptions.effort(thinkingLevel: turn.settings.thinkingLevel)
        let launch = ClaudeLaunch(
            arguments: plan.arguments(turn.backendSession, effort),
            effort: effort,
            environment: plan.environment,
            directory: directory,
            session: session,
            idleMillis: plan.idleMillis
        )
        let hooks = ClaudeProcessHooks(
            mayRetire: { [weak self] process in self?.retire(process) ?? true },
            exited: { [weak self] process in self?.forget(process) },
            version: { [weak self] version in self?.noteVersion(version) },
            slashCommands: { [weak self] names in self?.noteSlashCommands(names) },
            log: { [weak self] message, metadata in
                self?.logger?.info("\(message)", metadata: metadata.mapValues { .string($0) })
            },
            ended: { [threads] in threads.leave() }
        )
        return factory(turn.conversationID, launch, hooks)
    }

    /// An idle process asks to stop: it may unless a turn is on its way to it.
    private func retire(_ process: any ClaudeProcessHandle) -> Bool {
        table.withLock { table in
            guard table.processes[process.conversationID] === process else { return true }
            guard !process.isBusy else { return false }
            table.processes[process.conversationID] = nil
            process.markOver()
            return true
        }
    }

    private func forget(_ process: any ClaudeProcessHandle) {
        table.withLock { table in
            if table.processes[process.conversationID] === process { table.processes[process.conversationID] = nil }
        }
    }
}
