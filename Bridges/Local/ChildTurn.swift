import RelayCore
import RelayProcess
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One turn of a child-process backend: runs the child on the calling (dedicated) thread, feeds its
/// stdout to a `ChildOutputReader`, and enforces the timeouts and cancellation.
final class ChildTurn<Reader: ChildOutputReader>: Sendable {
    /// Progress events are at most this often; the rest is coalesced.
    static var progressInterval: Duration { .milliseconds(25) }
    /// How often the child is checked for an exit while a grandchild still holds the pipes.
    static var exitCheckInterval: Duration { .milliseconds(100) }

    private struct State {
        var cancelled = false
        /// The child while it may be signalled: set after spawn, cleared just before it is reaped.
        var livePID: pid_t?
    }

    private enum Outcome {
        case ended(ChildProcess.Termination)
        /// The output said it was over and the child did not exit within the grace: it was killed.
        case lingered
        case timedOut(String)
        case rejected(String)
        case cancelled
    }

    /// What `pump` keeps between polls besides the child.
    private struct Pump {
        var reader: Reader
        var stderr = StderrCapture()
        /// Progress held back by the throttle: the reader's text (`nil`) or one it gave.
        var pending: String??
        var lastProgress: ContinuousClock.Instant?
        var completedAt: ContinuousClock.Instant?
    }

    private let arguments: [String]
    private let environment: [String]
    private let directory: String?
    private let input: [UInt8]
    /// The longest the child may go without writing anything.
    private let inactivity: Duration
    /// The longest the whole turn may take, if bounded.
    private let maxDuration: Duration?
    /// How long a child may run on once its output said the turn is over.
    private let exitGrace: Duration
    private let reader: Reader
    private let events: @Sendable (TurnEvent) -> Void
    private let stderrLine: @Sendable (String) -> Void
    private let state = Mutex(State())

    init(
        arguments: [String],
        environment: [String],
        directory: String? = nil,
        input: String = "",
        timeout: Duration,
        maxDuration: Duration? = nil,
        exitGrace: Duration = .seconds(3),
        reader: Reader,
        stderrLine: @escaping @Sendable (String) -> Void = { _ in },
        events: @escaping @Sendable (TurnEvent) -> Void
    ) {
        self.arguments = arguments
        self.environment = environment
        self.directory = directory
        self.input = Array(input.utf8)
        self.inactivity = timeout
        self.maxDuration = maxDuration
        self.exitGrace = exitGrace
        self.reader = reader
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
            finish([.failed("cannot start \(arguments.first ?? "command"): \(error)")])
            return
        }
        let registered = state.withLock { state in
            state.livePID = state.cancelled ? nil : child.pid
            return !state.cancelled
        }
        var pump = Pump(reader: reader)
        let outcome = registered ? self.pump(&child, &pump) : .cancelled
        closeAll(&child)
        var termination: ChildProcess.Termination = .signaled(SIGKILL)
        // Still unreaped (or cancelled while starting, before cancel() could reach it): kill, then reap.
        if takeLivePID() != nil || !registered {
            ChildProcess.killGroup(child.pid)
            termination = child.reap()
        }
        if !pump.stderr.head.isEmpty { stderrLine(OutputText.text(of: pump.stderr.head, trimmingNewline: true)) }
        switch outcome {
        case .cancelled: return
        case .timedOut(let reason), .rejected(let reason): finish([.failed(reason)])
        case .ended(let ended):
            flushProgress(&pump)
            finish(pump.reader.ending(ended, stderr: pump.stderr.tailText))
        case .lingered:
            flushProgress(&pump)
            finish(pump.reader.ending(termination, stderr: pump.stderr.tailText))
        }
    }

    /// Moves data between the pipes until the child is gone and its output closed, or the turn must stop.
    private func pump(_ child: inout ChildProcess, _ pump: inout Pump) -> Outcome {
        let clock = ContinuousClock()
        let started = clock.now
        var lastActivity = started
        var pendingInput = input[...]
        var termination: ChildProcess.Termination?
        var buffer = [UInt8](repeating: 0, count: 65_536)
        if pendingInput.isEmpty { ChildPipe.close(&child.stdinFD) }

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
            let deadline: ContinuousClock.Instant
            if let completedAt = pump.completedAt {
                // The answer is in: only the exit grace applies now.
                deadline = completedAt + exitGrace
                if now >= deadline { return .lingered }
            } else {
                let quietUntil = lastActivity + inactivity
                let endBy = maxDuration.map { started + $0 }
                if let endBy, now >= endBy { return .timedOut("ran longer than \(Self.seconds(maxDuration ?? .zero)) s") }
                if now >= quietUntil { return .timedOut("no output for \(Self.seconds(inactivity)) s") }
                deadline = endBy.map { min($0, quietUntil) } ?? quietUntil
            }
            if pump.pending != nil, pump.lastProgress.map({ now - $0 >= Self.progressInterval }) ?? true { flushProgress(&pump, at: now) }

            var wait = min(deadline - now, Self.exitCheckInterval)
            if pump.pending != nil, let lastProgress = pump.lastProgress { wait = min(wait, Self.progressInterval - (now - lastProgress)) }
            var fds: [pollfd] = []
            if child.stdoutFD >= 0 { fds.append(pollfd(fd: child.stdoutFD, events: Int16(POLLIN), revents: 0)) }
            if child.stderrFD >= 0 { fds.append(pollfd(fd: child.stderrFD, events: Int16(POLLIN), revents: 0)) }
            if child.stdinFD >= 0 { fds.append(pollfd(fd: child.stdinFD, events: Int16(POLLOUT), revents: 0)) }
            let milliseconds = Int32(clamping: Int((wait / .milliseconds(1)).rounded(.up)))
            guard poll(&fds, nfds_t(fds.count), max(milliseconds, 0)) > 0 else { continue }

            for entry in fds where entry.revents != 0 {
                if entry.fd == child.stdoutFD || entry.fd == child.stderrFD { lastActivity = clock.now }
                if entry.fd == child.stdoutFD {
                    var found: [ChildOutput] = []
                    var failure: ChildOutputError?
                    let open = ChildPipe.drain(&child.stdoutFD, into: &buffer) { bytes in
                        do throws(ChildOutputError) { found += try pump.reader.read(bytes) } catch { failure = error }
                    }
                    deliver(found, &pump)
                    if let failure { return .rejected(failure.reason) }
                    if pump.reader.isComplete, pump.completedAt == nil { pump.completedAt = clock.now }
                    // End of output: show the whole text before the turn's end.
                    if !open { flushProgress(&pump) }
                } else if entry.fd == child.stderrFD {
                    _ = ChildPipe.drain(&child.stderrFD, into: &buffer) { pump.stderr.append($0) }
                } else if entry.fd == child.stdinFD {
                    let written = pendingInput.withUnsafeBytes { write(child.stdinFD, $0.baseAddress, min($0.count, 65_536)) }
                    if written > 0 { pendingInput = pendingInput.dropFirst(written) }
                    if pendingInput.isEmpty || (written < 0 && errno != EAGAIN && errno != EINTR) { ChildPipe.close(&child.stdinFD) }
                }
            }
        }
    }

    /// Sends what the reader found, holding progress back for the throttle.
    private func deliver(_ found: [ChildOutput], _ pump: inout Pump) {
        for output in found {
            switch output {
            case .grew: pump.pending = .some(nil)
            case .event(.progress(let text)): pump.pending = .some(text)
            case .event(let event):
                flushProgress(&pump)
                emit(event)
            }
        }
    }

    private func flushProgress(_ pump: inout Pump, at now: ContinuousClock.Instant = ContinuousClock().now) {
        guard let pending = pump.pending else { return }
        emit(.progress(pending ?? pump.reader.progressText()))
        pump.pending = nil
        pump.lastProgress = now
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

    /// Ends the turn: everything but the last event, typing off, then the last one.
    private func finish(_ ending: [TurnEvent]) {
        ending.dropLast().forEach(emit)
        emit(.typing(false))
        ending.last.map(emit)
    }

    private func closeAll(_ child: inout ChildProcess) {
        ChildPipe.close(&child.stdinFD)
        ChildPipe.close(&child.stdoutFD)
        ChildPipe.close(&child.stderrFD)
    }

    static func seconds(_ duration: Duration) -> Int64 { duration.components.seconds }
}
