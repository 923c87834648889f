import Foundation
import RelayCore
import RelayProcess
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One long-lived Claude Code process (one conversation's) and the thread that runs it.
///
/// Other threads `post` inputs (a turn, an answer, a cancel, a stop) and wake the thread through a
/// pipe; the thread (`ClaudeProcessRun`) owns the child, its pipes and its `ClaudeSession`, and
/// performs what the session decides. The few facts the manager needs (busy or not, the session
/// told to the relay, whether it is over) sit in `shared`.
final class ClaudeProcess: ClaudeProcessHandle {
    /// What the manager reads and writes under its own lock (this one is taken after it).
    struct Shared: Sendable {
        /// Turns handed to it, and turns it is done with: busy while they differ.
        var assigned = 0
        var finished = 0
        /// The session the relay was last told about (what the core has for the conversation).
        var reportedSession: String?
        /// When it was last given a turn (the least recently used idle one is stopped first).
        var lastUsed: UInt64 = 0
        /// Stopping or gone: it takes no more turns.
        var over = false
        var version: String?
    }

    let conversationID: String
    let launch: ClaudeLaunch
    let shared: Mutex<Shared>
    private let hooks: ClaudeProcessHooks
    private let inbox = Mutex<[ClaudeProcessInput]>([])
    private let wake: (read: Int32, write: Int32)

    init(conversationID: String, launch: ClaudeLaunch, hooks: ClaudeProcessHooks) {
        self.conversationID = conversationID
        self.launch = launch
        self.hooks = hooks
        shared = Mutex(Shared(reportedSession: launch.session.resuming))
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        }
        wake = (fds[0], fds[1])
    }

    deinit {
        if wake.read >= 0 { close(wake.read) }
        if wake.write >= 0 { close(wake.write) }
    }

    /// Hands the thread an input and wakes it.
    func post(_ input: ClaudeProcessInput) {
        inbox.withLock { $0.append(input) }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    var isBusy: Bool { shared.withLock { $0.assigned != $0.finished } }
    var lastUsed: UInt64 { shared.withLock(\.lastUsed) }
    var isOver: Bool { shared.withLock(\.over) }
    var reportedSession: String? { shared.withLock(\.reportedSession) }

    func assign(use: UInt64) {
        shared.withLock { shared in
            shared.assigned += 1
            shared.lastUsed = use
        }
    }

    func markOver() { shared.withLock { $0.over = true } }

    /// Starts the thread that runs it.
    func startThread() {
        let thread = Thread { [self] in
            ClaudeProcessRun(process: self).run()
            hooks.ended()
        }
        thread.name = "claude-code"
        thread.start()
    }

    func takeInputs() -> [ClaudeProcessInput] {
        inbox.withLock { inputs in
            defer { inputs = [] }
            return inputs
        }
    }

    var wakeFD: Int32 { wake.read }

    func drainWake() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wake.read, &buffer, buffer.count) > 0 {}
    }

    func notify<Result>(_ hook: (ClaudeProcessHooks) -> Result) -> Result { hook(hooks) }
}
