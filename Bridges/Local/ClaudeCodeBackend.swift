import Foundation
import Logging
import RelayCore

/// A built-in backend that runs Claude Code per turn, headless:
/// `claude -p --output-format stream-json --verbose [--resume <session>] [extra…] -- <text>`.
///
/// The text is one argument after `--` (no shell, and never read as an option). The turn runs in
/// the conversation's working directory, else `workingDirectory`, else the relay's; a directory
/// that does not exist fails the turn rather than letting Claude Code work somewhere else. The
/// stream's text becomes progress, its tool uses tool events, its session id the conversation's
/// backend session (resumed on the next turn), its `result` the answer. Timeouts as the command
/// backend's; the first 4 KiB of stderr go to the log at debug, its end into a failure's reason.
///
/// - Important: Events arrive on the turn's thread. After `cancel()` returns at most the event
///   already being delivered can still arrive.
public final class ClaudeCodeBackend: Backend {
    public let name: String
    private let command: [String]
    private let extraArguments: [String]
    private let timeout: Duration
    private let maxDuration: Duration?
    private let environment: [String]
    private let workingDirectory: String?
    private let exitGrace: Duration
    private let logger: Logger?

    public init(
        name: String,
        command: [String] = ["claude"],
        timeoutSeconds: Int = 600,
        maxSeconds: Int? = nil,
        environment: [String: String] = [:],
        workingDirectory: String? = nil,
        extraArguments: [String] = [],
        exitGraceMillis: Int = 3_000,
        logger: Logger? = nil
    ) {
        self.name = name
        self.command = command
        self.extraArguments = extraArguments
        self.timeout = .seconds(timeoutSeconds)
        self.maxDuration = maxSeconds.map { .seconds($0) }
        self.environment = ProcessInfo.processInfo.environment.merging(environment) { _, configured in configured }.map { "\($0.key)=\($0.value)" }
        self.workingDirectory = workingDirectory
        self.exitGrace = .milliseconds(exitGraceMillis)
        self.logger = logger
    }

    /// The whole command line of one turn.
    static func arguments(command: [String], text: String, resuming session: String?, extra: [String]) -> [String] {
        command + ["-p", "--output-format", "stream-json", "--verbose"] + (session.map { ["--resume", $0] } ?? []) + extra + ["--", text]
    }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle {
        let directory = turn.workingDirectory ?? workingDirectory
        if let directory, !Self.isDirectory(directory) {
            events(.typing(true))
            events(.typing(false))
            events(.failed("the working directory \(directory) does not exist"))
            return TurnHandle {}
        }
        let runner = ChildTurn(
            arguments: Self.arguments(command: command, text: turn.text, resuming: turn.backendSession, extra: extraArguments),
            environment: environment,
            directory: directory,
            timeout: timeout,
            maxDuration: maxDuration,
            exitGrace: exitGrace,
            reader: ClaudeOutput(resumed: turn.backendSession),
            stderrLine: { [logger, name] text in logger?.debug("claude-code backend stderr", metadata: ["backend": "\(name)", "stderr": "\(text)"]) },
            events: events
        )
        let thread = Thread { runner.run() }
        thread.name = "clawrelay.claude.\(name)"
        thread.start()
        return TurnHandle { runner.cancel() }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
