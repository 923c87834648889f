/// How the claude-code backend runs Claude Code (the `[[backends]] kind = "claude-code"` keys).
public struct ClaudeCodeOptions: Sendable, Equatable {
    /// Who decides whether a tool may run.
    public enum PermissionMode: String, Sendable, Equatable, CaseIterable {
        /// Claude Code's default rules; whatever they would ask is asked of the user's devices
        /// through the relay (an approval: `/approve`, Companion's prompt, a gateway operator's).
        case ask
        /// Claude Code's own modes (`--permission-mode`); what they still ask goes through the
        /// relay as with `ask`.
        case acceptEdits, auto, dontAsk, plan
        /// No checks at all. Claude Code itself refuses it when run as root.
        case bypassPermissions
    }

    /// The program and its first arguments (`claude`, looked up in PATH).
    public var command = ["claude"]
    /// Seconds a turn may go without any output (waiting for an approval does not count).
    public var timeoutSeconds = 600
    /// Seconds a whole turn may take (waiting for approvals does not count); nil = no bound.
    public var maxSeconds: Int?
    /// Variables added to the relay's environment.
    public var environment: [String: String] = [:]
    /// Where conversations without a working directory of their own run; nil = the relay's.
    public var workingDirectory: String?
    /// Arguments added after the relay's own (`--model`, …).
    public var extraArguments: [String] = []
    public var permissionMode = PermissionMode.ask
    /// Tool rules allowed without asking (`--allowedTools`, e.g. `Bash(git status)`, `Edit`).
    public var allowedTools: [String] = []
    /// Tool rules never allowed (`--disallowedTools`).
    public var disallowedTools: [String] = []
    /// Seconds the user has to answer an approval before it is denied.
    public var approvalTimeoutSeconds = 600
    /// Claude Code processes that may run at once (one per conversation in use).
    public var maxProcesses = 4
    /// Seconds an idle process lives before it is stopped (the next turn resumes its session).
    public var idleSeconds = 600
    /// Milliseconds an interrupted turn has to end before Claude Code gets SIGTERM, and SIGTERM
    /// before its process group gets SIGKILL.
    public var stopGraceMillis = 5_000

    public static let approvalTimeoutRange = 1...86_400
    public static let maxProcessesRange = 1...64
    public static let idleSecondsRange = 10...86_400

    public init() {}

    /// The whole command line of a process, resuming `session` and with `--effort effort` when given.
    public func arguments(resuming session: String?, effort: String? = nil) -> [String] {
        var arguments =
            command + [
                "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
                "--permission-prompt-tool", "stdio",
            ]
        if permissionMode != .ask { arguments += ["--permission-mode", permissionMode.rawValue] }
        for tool in allowedTools { arguments += ["--allowedTools", tool] }
        for tool in disallowedTools { arguments += ["--disallowedTools", tool] }
        if let session { arguments += ["--resume", session] }
        if let effort { arguments += ["--effort", effort] }
        return arguments + extraArguments
    }

    /// Claude Code's `--effort` (its `--help`: low, medium, high, xhigh, max) for an OpenClaw
    /// thinking level: `off` and `minimal` are its least, `low`; `adaptive` (the model decides)
    /// and no level leave Claude Code's own default.
    public static func effort(thinkingLevel: String?) -> String? {
        switch thinkingLevel {
        case "off", "minimal", "low": "low"
        case "medium": "medium"
        case "high": "high"
        case "xhigh": "xhigh"
        case "max": "max"
        default: nil
        }
    }
}
