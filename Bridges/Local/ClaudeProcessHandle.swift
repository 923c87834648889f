import RelayCore
import Synchronization

/// What `ClaudeProcesses` needs of a process: a real `ClaudeProcess`, or a test's stand-in.
///
/// - Important: Called from any thread; `post` never blocks.
protocol ClaudeProcessHandle: AnyObject, Sendable {
    var conversationID: String { get }
    var launch: ClaudeLaunch { get }
    /// It holds turns it has not finished (one on its way to it included).
    var isBusy: Bool { get }
    /// When it was last given a turn.
    var lastUsed: UInt64 { get }
    /// Stopping or gone: it takes no more turns.
    var isOver: Bool { get }
    /// The session the relay was last told about (what the core holds for the conversation).
    var reportedSession: String? { get }
    /// A turn is on its way to it.
    func assign(use: UInt64)
    func markOver()
    func post(_ input: ClaudeProcessInput)
    /// Starts the thread that runs it (once, after it is in the table).
    func startThread()
}

/// What other threads tell a process.
enum ClaudeProcessInput: Sendable {
    case start(ClaudeTurnSink, text: String, attachments: [TurnAttachment], readOnly: Bool)
    case answer(turn: Int, requestID: String, ApprovalAnswer)
    case cancel(turn: Int)
    /// `terminate`: at once with SIGTERM (the relay stops), else by closing its input.
    case stop(terminate: Bool)
}

/// How to start a Claude Code process.
struct ClaudeLaunch: Sendable {
    var arguments: [String]
    /// The `--effort` it runs with (from the conversation's thinking level; nil: Claude Code's default).
    var effort: String?
    var environment: [String]
    var directory: String?
    var session: ClaudeSession.Settings
    /// How long it may sit idle before it is stopped.
    var idleMillis: Int64
}

/// What a process tells its owner, on its thread.
struct ClaudeProcessHooks: Sendable {
    /// It has been idle for its idle time: may it stop? (The owner drops it if so.)
    var mayRetire: @Sendable (any ClaudeProcessHandle) -> Bool
    /// It is gone (or stopping): the owner forgets it.
    var exited: @Sendable (any ClaudeProcessHandle) -> Void
    var version: @Sendable (String) -> Void
    /// Claude Code listed its slash commands (`system/init`).
    var slashCommands: @Sendable ([String]) -> Void = { _ in }
    var log: @Sendable (String, [String: String]) -> Void
    /// Its thread is done.
    var ended: @Sendable () -> Void
}
