import Foundation
import Logging
import RelayCore

/// A built-in backend that runs Claude Code the way its own Agent SDK does: one long-lived
/// process per conversation in use (`-p --input-format stream-json --output-format stream-json
/// --verbose --include-partial-messages --permission-prompt-tool stdio`), each turn one line on
/// its stdin, `--resume` when a process starts for a conversation that has a Claude session.
///
/// Its text streams, its tools and their results show, its permission prompts become the
/// relay's approvals (asked of every device of the user), its retries show as status lines, and
/// each turn's cost and tokens are reported. A process runs in the conversation's working
/// directory, else `workingDirectory`, else the relay's; a directory that does not exist fails
/// the turn rather than letting Claude Code work somewhere else.
///
/// - Important: Events arrive on the process's thread. After the handle's `cancel()` returns at
///   most the event already being delivered can still arrive.
public final class ClaudeCodeBackend: Backend {
    public let name: String
    private let options: ClaudeCodeOptions
    private let processes: ClaudeProcesses
    private let logger: Logger?

    public init(name: String, options: ClaudeCodeOptions, logger: Logger? = nil) {
        self.name = name
        self.options = options
        self.logger = logger
        let environment = ProcessInfo.processInfo.environment.merging(options.environment) { _, configured in configured }
        let grace = Int64(options.stopGraceMillis)
        let session = ClaudeSession.Settings(
            inactivityMillis: Int64(options.timeoutSeconds) * 1000,
            maxTurnMillis: options.maxSeconds.map { Int64($0) * 1000 },
            approvalTimeoutMillis: options.approvalTimeoutSeconds * 1000,
            interruptGraceMillis: grace,
            terminateGraceMillis: grace,
            permissionMode: options.permissionMode == .ask ? "default" : options.permissionMode.rawValue
        )
        let plan = ClaudeProcesses.Plan(
            maxProcesses: options.maxProcesses,
            idleMillis: Int64(options.idleSeconds) * 1000,
            session: session,
            environment: environment.map { "\($0.key)=\($0.value)" },
            arguments: { [options] session, effort in options.arguments(resuming: session, effort: effort) }
        )
        processes = ClaudeProcesses(plan: plan, logger: logger.map { Self.tagged($0, name) })
    }

    /// Claude Code's version: from `claude --version` at start (see `probeVersion`), then as its
    /// processes report it.
    public var agentVersion: String? { processes.version }

    /// A read-only turn runs in Claude Code's `plan` permission mode.
    public var honoursReadOnly: Bool { true }
    /// Claude Code's slash commands, as its processes listed them last (none before the first starts).
    public var slashCommands: [String] { processes.slashCommands }

    /// Claude Code processes running now.
    public var processCount: Int { processes.count }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle {
        let directory = turn.workingDirectory ?? options.workingDirectory
        if let directory, !Self.isDirectory(directory) {
            events(.typing(true))
            events(.typing(false))
            events(.failed("the working directory \(directory) does not exist"))
            return TurnHandle {}
        }
        return processes.start(turn, directory: directory, events: events)
    }

    /// Claude Code's own `/compact` summarizes the session's context.
    public var canCompact: Bool { true }

    /// The conversation was reset: its process stops (the fresh conversation's first turn starts
    /// one without `--resume`).
    public func reset(conversationID: String, reason: ResetReason) {
        processes.stop(conversationID: conversationID)
    }

    /// Stops every process (the relay stops): SIGTERM, so their tools end too; waits up to `limit`.
    public func stop(within limit: Duration = .seconds(8)) {
        processes.stopAll(within: limit)
    }

    /// A reload removed or replaced it and no turn runs on it: its idle processes stop, on a
    /// thread of their own (a stop waits); their sessions resume on the next turn's process.
    public func retire() {
        let thread = Thread { [self] in stop() }
        thread.name = "retire-\(name.prefix(8))"
        thread.start()
    }

    /// Runs `claude --version` on a thread of its own, so the version is known (Companion's
    /// `welcome`) before any conversation starts a process.
    public func probeVersion() {
        let runner = ChildTurn(
            arguments: options.command + ["--version"],
            environment: ProcessInfo.processInfo.environment.merging(options.environment) { _, configured in configured }.map {
                "\($0.key)=\($0.value)"
            },
            timeout: .seconds(20),
            reader: CommandOutput()
        ) { [processes, logger, name] event in
            switch event {
            case .final(let text):
                guard let version = Self.version(from: text) else { return }
                if processes.version == nil { processes.noteVersion(version) }
            case .failed(let reason):
                logger?.warning("claude --version failed", metadata: ["backend": "\(name)", "reason": "\(reason)"])
            default:
                break
            }
        }
        let thread = Thread { runner.run() }
        thread.name = "claude-version"
        thread.start()
    }

    /// "2.1.332 (Claude Code)" → "2.1.332".
    static func version(from text: String) -> String? {
        let first = text.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
        guard let lead = first.first, lead.isNumber, first.count <= 64 else { return nil }
        return first
    }

    private static func tagged(_ logger: Logger, _ name: String) -> Logger {
        var logger = logger
        logger[metadataKey: "backend"] = .string(name)
        return logger
    }

    private static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
