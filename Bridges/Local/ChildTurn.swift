import RelayCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One turn of a `CommandBackend`: runs the child on the calling (dedicated) thread.
final class CommandTurn: Sendable {
    /// Largest answer accepted; more kills the child.
    static let outputLimit = 1 << 20
    /// Progress events are at most this often; the rest is coalesced.
    static let progressInterval = Duration.milliseconds(25)
    /// How often the child is checked for an exit while a grandchild still holds the pipes.
    static let exitCheckInterval = Duration.milliseconds(100)

    private struct State {
        var cancelled = false
        /// The child while it may be signalled: set after spawn, cleared just before it is reaped.
        var livePID: pid_t?
    }

    private enum Outcome {
        case ended(ChildProcess.Termination)
        case timedOut(String)
        case tooLarge
        case cancelled
    }

    /// stderr bytes per turn handed to `stderrLine` at most; the rest is read and dropped.
    static let stderrLimit = 4_096

    private let arguments: [String]
    private let environment: [String]
    private let directory: String?
    private let input: [UInt8]
    /// The longest the child may go without writing anything.
    private let inactivity: Duration
    /// The longest the whole turn may take, if bounded.
    private let maxDuration: Duration?
    private let events: @Sendable (TurnEvent) -> Void
    private let stderrLine: @Sendable (String) -> Void
    private let state = Mutex(State())

    init(
        arguments: [String], environment: [String], directory: String? = nil, input: String, timeout: Duration, maxDuration: Duration? = nil,
        stderrLine: @escaping @Sendable (String) -> Void = { _ in }, events: @escaping @Sendable (TurnEvent) -> Void
    ) {
        self.arguments = arguments
        self.environment = environment
        self.directory = directory
        self.input = Array(input.utf8)
        self.inactivity = timeout
        self.maxDuration = maxDuration
        self.stderrLine = stderrLine
        self.events = events
    }

    /// Kills the child's process group; the turn then ends without another event.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            if let pid = state.livePID { ChildProcess.killGroup(pid) }
        }
    }

    /// Runs the whole turn.
    ///
    /// - Important: Blocks for as long as the child runs; call it on a thread of its own.
    func run() {
        // A write to a pipe whose reader is gone must fail with EPIPE, not kill the relay.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)

        emit(.typing(true))
        var child: ChildProcess
        do {
            child = try ChildProcess.spawn(arguments: arguments, environment: environment, directory: directory)
        } catch {
            finish(.failed("cannot start \(arguments.first ?? "command"): \(error)"))
            return
        }
        let registered = state.withLock { state in
            state.livePID = state.cancelled ? nil : child.pid
            return !state.cancelled
        }
        var output: [UInt8] = []
        let outcome = registered ? pump(&child, output: &output) : .cancelled
        closeAll(&child)
        // Still unreaped (or cancelled while starting, before cancel() could reach it): kill, then reap.
        if takeLivePID() != nil || !registered {
            ChildProcess.killGroup(child.pid)
            _ = child.reap()
        }
        switch outcome {
        case .cancelled: return
        case .timedOut(let reason): finish(.failed(reason))
        case .tooLarge: finish(.failed("output too large"))
        case .ended(.exited(0)): finish(.final(Self.text(of: output, trimmingNewline: true)))
        case .ended(.exited(let status)): finish(.failed("exit status \(status)"))
        case .ended(.signaled(let signal)): finish(.failed("killed by signal \(signal)"))
        }
    }

    /// Moves data between the pipes until the child is gone and its output closed, or the turn must stop.
    private func pump(_ child: inout ChildProcess, output: inout [UInt8]) -> Outcome {
        let clock = ContinuousClock()
        let started = clock.now
        var lastActivity = started
        var stderrText: [UInt8] = []
        defer { if !stderrText.isEmpty { stderrLine(Self.text(of: stderrText, trimmingNewline: true)) } }
        var pendingInput = input[...]
        var termination: ChildProcess.Termination?
        var lastProgress: ContinuousClock.Instant?
        var progressPending = false
        var buffer = [UInt8](repeating: 0, count: 65_536)
        if pendingInput.isEmpty { closeFD(&child.stdinFD) }

        while true {
            if isCancelled { return .cancelled }
            if termination == nil, child.hasExited() {
                // Reap the leader, but first kill what it left behind in its group.
                _ = takeLivePID()
                ChildProcess.killGroup(child.pid)
                termination = child.reap()
            }
            if let termination, child.stdoutFD < 0, child.stderrFD < 0 { return .ended(termination) }
            let now = clock.now
            let quietUntil = lastActivity + inactivity
            let endBy = maxDuration.map { started + $0 }
            let deadline = endBy.map { min($0, quietUntil) } ?? quietUntil
            if let endBy, now >= endBy { return .timedOut("ran longer than \(Self.seconds(maxDuration ?? .zero)) s") }
            if now >= quietUntil { return .timedOut("no output for \(Self.seconds(inactivity)) s") }
            if progressPending, lastProgress.map({ now - $0 >= Self.progressInterval }) ?? true {
                emit(.progress(Self.text(of: output, trimmingNewline: false)))
                lastProgress = now
                progressPending = false
            }

            var wait = min(deadline - now, Self.exitCheckInterval)
            if progressPending, let lastProgress { wait = min(wait, Self.progressInterval - (now - lastProgress)) }
            var fds: [pollfd] = []
            if child.stdoutFD >= 0 { fds.append(pollfd(fd: child.stdoutFD, events: Int16(POLLIN), revents: 0)) }
            if child.stderrFD >= 0 { fds.append(pollfd(fd: child.stderrFD, events: Int16(POLLIN), revents: 0)) }
            if child.stdinFD >= 0 { fds.append(pollfd(fd: child.stdinFD, events: Int16(POLLOUT), revents: 0)) }
            let milliseconds = Int32(clamping: Int((wait / .milliseconds(1)).rounded(.up)))
            guard poll(&fds, nfds_t(fds.count), max(milliseconds, 0)) > 0 else { continue }

            for entry in fds where entry.revents != 0 {
                if entry.fd == child.stdoutFD || entry.fd == child.stderrFD { lastActivity = clock.now }
                if entry.fd == child.stdoutFD {
                    let before = output.count
                    let open = drain(&child.stdoutFD, into: &buffer) { output.append(contentsOf: $0) }
                    if output.count > Self.outputLimit { return .tooLarge }
                    if output.count > before { progressPending = true }
                    if !open && progressPending {
                        // End of output: show the complete text before the final answer.
                        emit(.progress(Self.text(of: output, trimmingNewline: false)))
                        progressPending = false
                    }
                } else if entry.fd == child.stderrFD {
                    _ = drain(&child.stderrFD, into: &buffer) { bytes in
                        stderrText.append(contentsOf: bytes.prefix(max(0, Self.stderrLimit - stderrText.count)))
                    }
                } else if entry.fd == child.stdinFD {
                    let written = pendingInput.withUnsafeBytes { write(child.stdinFD, $0.baseAddress, min($0.count, 65_536)) }
                    if written > 0 { pendingInput = pendingInput.dropFirst(written) }
                    if pendingInput.isEmpty || (written < 0 && errno != EAGAIN && errno != EINTR) { closeFD(&child.stdinFD) }
                }
            }
        }
    }

    /// Reads once (so a fast writer cannot keep this loop from its limits); closes the pipe on end of
    /// file or error. Returns whether it is still open.
    private func drain(_ fd: inout Int32, into buffer: inout [UInt8], _ consume: (ArraySlice<UInt8>) -> Void) -> Bool {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count > 0 {
            consume(buffer[..<count])
            return true
        }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return true }
        closeFD(&fd)
        return false
    }

    private var isCancelled: Bool { state.withLock { $0.cancelled } }

    private func takeLivePID() -> pid_t? {
        state.withLock { state in
            defer { state.livePID = nil }
            return state.livePID
        }
    }

    private func emit(_ event: TurnEvent) {
        if !isCancelled { events(event) }
    }

    private func finish(_ event: TurnEvent) {
        emit(.typing(false))
        emit(event)
    }

    private func closeAll(_ child: inout ChildProcess) {
        closeFD(&child.stdinFD)
        closeFD(&child.stdoutFD)
        closeFD(&child.stderrFD)
    }

    private func closeFD(_ fd: inout Int32) {
        if fd >= 0 { _ = close(fd) }
        fd = -1
    }

    /// The output as text: a cut multi-byte character at the end is left for the next read.
    static func seconds(_ duration: Duration) -> Int64 { duration.components.seconds }

    static func text(of output: [UInt8], trimmingNewline: Bool) -> String {
        var end = trimmingNewline ? output.count : completeUTF8Prefix(output)
        if trimmingNewline, end > 0, output[end - 1] == UInt8(ascii: "\n") {
            end -= 1
            if end > 0, output[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        }
        return String(decoding: output[..<end], as: UTF8.self)
    }

    /// The length of `bytes` without a trailing, incomplete UTF-8 sequence.
    static func completeUTF8Prefix(_ bytes: [UInt8]) -> Int {
        var index = bytes.count - 1
        while index >= 0, bytes.count - index <= 4 {
            let byte = bytes[index]
            if byte & 0xC0 != 0x80 {
                let length = byte < 0xC0 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
                return bytes.count - index >= length ? bytes.count : index
            }
            index -= 1
        }
        return bytes.count
    }
}
