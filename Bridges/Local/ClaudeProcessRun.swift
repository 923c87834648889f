import Foundation
import RelayCore
import RelayProcess

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The thread of a `ClaudeProcess`: spawns Claude Code, then polls its pipes and the wake-up
/// pipe, feeding lines, inputs and the time to its `ClaudeSession` and performing what it says
/// (writes, events, signals) until the process is gone.
///
/// - Important: Lives and dies on that one thread; blocks in `poll`.
final class ClaudeProcessRun {
    /// Progress goes out at most this often per turn; the rest is coalesced.
    static let progressIntervalMillis: Int64 = 25
    /// The longest poll, so an exit nobody signalled is still noticed.
    static let longestWaitMillis: Int64 = 1_000
    /// How long output may stay open once Claude Code exited (a tool may hold the pipe).
    static let drainAfterExitMillis: Int64 = 1_000

    private let process: ClaudeProcess
    private var machine: ClaudeSession
    /// The child while it runs: its pid (0 before the spawn) and the parent's ends of its pipes.
    private var spawned: ChildProcess?
    private var pid: pid_t = 0
    private var stdinFD: Int32 = -1
    private var stdoutFD: Int32 = -1
    private var stderrFD: Int32 = -1
    private var splitter = LineSplitter(limit: ClaudeSession.lineLimit)
    private var stderr = StderrCapture()
    private var outbox: [UInt8] = []
    private var closeInputWhenFlushed = false
    private var sinks: [Int: ClaudeTurnSink] = [:]
    private var pendingProgress: [Int: String] = [:]
    private var lastProgress: [Int: Int64] = [:]
    private var idleSince: Int64?
    private var exitedAt: Int64?
    private var version: String?
    private var slashCommands: [String]?
    private let origin = ContinuousClock.now

    init(process: ClaudeProcess) {
        self.process = process
        machine = ClaudeSession(settings: process.launch.session)
    }

    private var now: Int64 { Int64((ContinuousClock.now - origin) / .milliseconds(1)) }

    func run() {
        // A write to a pipe whose reader is gone must fail with EPIPE, not kill the relay.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        Thread.nameCurrent("claude-code")
        let launch = process.launch
        do {
            let child = try ChildProcess.spawn(arguments: launch.arguments, environment: launch.environment, directory: launch.directory)
            spawned = child
            (pid, stdinFD, stdoutFD, stderrFD) = (child.pid, child.stdinFD, child.stdoutFD, child.stderrFD)
        } catch {
            end(failing: "cannot start \(launch.arguments.first ?? "claude"): \(error)")
            return
        }
        log("Claude Code started", ["pid": "\(pid)", "resuming": launch.session.resuming == nil ? "no" : "yes"])
        pump()
        finish()
    }

    /// Moves bytes and inputs until Claude Code is gone and its output read.
    private func pump() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            takeInputs()
            let now = self.now
            if exitedAt == nil, hasExited { markExited(now) }
            if let exitedAt, stdoutFD < 0 || now - exitedAt >= Self.drainAfterExitMillis { return }
            perform(machine.tick(now: now))
            flushProgress(now: now, all: false)
            checkIdle(now: now)
            if stdinFD >= 0, closeInputWhenFlushed, outbox.isEmpty { ChildPipe.close(&stdinFD) }

            var fds = [pollfd(fd: process.wakeFD, events: Int16(POLLIN), revents: 0)]
            if stdoutFD >= 0 { fds.append(pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)) }
            if stderrFD >= 0 { fds.append(pollfd(fd: stderrFD, events: Int16(POLLIN), revents: 0)) }
            if stdinFD >= 0, !outbox.isEmpty { fds.append(pollfd(fd: stdinFD, events: Int16(POLLOUT), revents: 0)) }
            let wait = max(0, min(waitMillis(now: now), Self.longestWaitMillis))
            guard poll(&fds, nfds_t(fds.count), Int32(wait)) > 0 else { continue }
            for entry in fds where entry.revents != 0 {
                if entry.fd == process.wakeFD {
                    process.drainWake()
                } else if entry.fd == stdoutFD {
                    readOutput(into: &buffer)
                } else if entry.fd == stderrFD {
                    _ = ChildPipe.drain(&stderrFD, into: &buffer) { stderr.append($0) }
                } else if entry.fd == stdinFD {
                    writeInput()
                }
            }
        }
    }

    private var hasExited: Bool { spawned?.hasExited() ?? true }

    private func readOutput(into buffer: inout [UInt8]) {
        var lines: [[UInt8]] = []
        let open = ChildPipe.drain(&stdoutFD, into: &buffer) { bytes in
            let overlong = splitter.split(bytes) { lines.append(Array($0)) }
            if overlong > 0 { lines.append([]) }  // a marker: handled below, in order
        }
        let now = self.now
        for line in lines {
            perform(line.isEmpty ? machine.overlongLine(now: now) : machine.receive(line: line, now: now))
        }
        if !open, exitedAt == nil {
            // Its output is closed: it cannot answer any more, so it is stopped.
            markExited(now)
        }
    }

    private func writeInput() {
        let written = outbox.withUnsafeBytes { write(stdinFD, $0.baseAddress, min($0.count, 65_536)) }
        if written > 0 {
            outbox.removeFirst(written)
        } else if written < 0, errno != EAGAIN, errno != EINTR {
            outbox = []
            ChildPipe.close(&stdinFD)
        }
    }

    private func markExited(_ now: Int64) {
        exitedAt = now
        process.shared.withLock { $0.over = true }
        process.notify { $0.exited(process) }
    }

    /// Inputs posted by other threads, in order.
    private func takeInputs() {
        let inputs = process.takeInputs()
        guard !inputs.isEmpty else { return }
        let now = self.now
        for input in inputs {
            switch input {
            case .start(let sink, let text, let attachments, let readOnly):
                guard exitedAt == nil, !machine.stopping else {
                    refuse(sink, "Claude Code stopped just as this message arrived; send it again")
                    continue
                }
                sinks[sink.id] = sink
                idleSince = nil
                // Uploaded files are read here, on the process's thread.
                let blocks = ClaudeInput.blocks(for: attachments)
                perform(
                    machine.start(turn: sink.id, text: text, attachments: blocks, readOnly: readOnly, uuid: UUID().uuidString.lowercased(), now: now)
                )
            case .answer(let turn, let requestID, let answer):
                perform(machine.answer(turn: turn, requestID: requestID, answer, now: now))
            case .cancel(let turn):
                sinks[turn]?.cancel()
                perform(machine.cancel(turn: turn, now: now))
            case .stop(let terminate):
                perform(machine.stop(now: now, terminate: terminate))
            }
        }
    }

    /// Idle for its idle time: stopped, if the owner agrees (no turn is on its way to it).
    private func checkIdle(now: Int64) {
        guard machine.isIdle, !machine.stopping, exitedAt == nil else {
            idleSince = nil
            return
        }
        let since = idleSince ?? now
        idleSince = since
        guard now - since >= process.launch.idleMillis else { return }
        if process.notify({ $0.mayRetire(process) }) {
            log("Claude Code idle, stopping it", [:])
            perform(machine.stop(now: now))
        } else {
            idleSince = now
        }
    }

    private func waitMillis(now: Int64) -> Int64 {
        var wait = Self.longestWaitMillis
        if let deadline = machine.nextDeadline { wait = min(wait, deadline - now) }
        if let idleSince, machine.isIdle, !machine.stopping { wait = min(wait, idleSince + process.launch.idleMillis - now) }
        for turn in pendingProgress.keys {
            wait = min(wait, (lastProgress[turn] ?? now) + Self.progressIntervalMillis - now)
        }
        return wait
    }

    /// Performs the session's actions, then lets go of the turns it is done with.
    private func perform(_ actions: [ClaudeSession.Action]) {
        publishState()
        for action in actions {
            switch action {
            case .write(let line):
                if stdinFD >= 0, !closeInputWhenFlushed { outbox += Array(line.utf8) }
            case .emit(let turn, let event):
                deliver(event, to: turn)
            case .closeInput:
                closeInputWhenFlushed = true
            case .terminate:
                if pid > 0, !hasExited { kill(pid, SIGTERM) }
            case .kill:
                if pid > 0, !hasExited { ChildProcess.killGroup(pid) }
            }
        }
        release()
    }

    private func deliver(_ event: TurnEvent, to turn: Int) {
        if case .progress(let text) = event {
            pendingProgress[turn] = text
            flushProgress(now: now, all: false)
            return
        }
        if let text = pendingProgress.removeValue(forKey: turn) { sinks[turn]?.emit(.progress(text)) }
        sinks[turn]?.emit(event)
    }

    private func flushProgress(now: Int64, all: Bool) {
        for (turn, text) in pendingProgress where all || now - (lastProgress[turn] ?? Int64.min / 2) >= Self.progressIntervalMillis {
            pendingProgress[turn] = nil
            lastProgress[turn] = now
            sinks[turn]?.emit(.progress(text))
        }
    }

    /// What the owner matches the next turn against, published before any event goes out: a
    /// client that hears a turn end may send the next one at once, and it must not be given to a
    /// process that holds another session or will take no more turns (a refused `--resume`).
    private func publishState() {
        let session = machine.reportedSession
        let over = machine.stopping || machine.startupFailure != nil
        process.shared.withLock { shared in
            shared.reportedSession = session
            if over { shared.over = true }
        }
    }

    /// Turns the session no longer has are done: the owner hears how many.
    private func release() {
        let live = Set(machine.turnIDs)
        let done = sinks.keys.filter { !live.contains($0) }
        for turn in done {
            sinks[turn] = nil
            pendingProgress[turn] = nil
            lastProgress[turn] = nil
        }
        process.shared.withLock { $0.finished += done.count }
        if let noted = machine.version, noted != version {
            version = noted
            process.notify { $0.version(noted) }
        }
        if let listed = machine.slashCommands, listed != slashCommands {
            slashCommands = listed
            process.notify { $0.slashCommands(listed) }
        }
    }

    /// Claude Code is gone: its group is killed (whatever it left there), it is reaped, and the
    /// turns it still had fail.
    private func finish() {
        ChildPipe.close(&stdinFD)
        ChildPipe.close(&stdoutFD)
        ChildPipe.close(&stderrFD)
        stopLingering()
        ChildProcess.killGroup(pid)
        let termination = spawned?.reap() ?? .exited(0)
        spawned = nil
        pid = 0
        flushProgress(now: now, all: true)
        perform(machine.exited(termination, stderr: stderr.tailText))
        if !stderr.head.isEmpty { log("Claude Code stderr", ["stderr": OutputText.text(of: stderr.head, trimmingNewline: true)]) }
        log("Claude Code exited", ["status": "\(termination)"])
        end(failing: "Claude Code stopped just as this message arrived; send it again")
    }

    /// The process is over: what was posted to it too late fails with `reason`.
    private func end(failing reason: String) {
        if exitedAt == nil {
            exitedAt = now
            process.shared.withLock { $0.over = true }
            process.notify { $0.exited(process) }
        }
        for input in process.takeInputs() {
            if case .start(let sink, _, _, _) = input { refuse(sink, reason) }
        }
        for sink in sinks.values { refuse(sink, reason) }
        sinks = [:]
    }

    private func refuse(_ sink: ClaudeTurnSink, _ reason: String) {
        sink.emit(.typing(true))
        sink.emit(.typing(false))
        sink.emit(.failed(reason))
        process.shared.withLock { $0.finished += 1 }
    }

    private func log(_ message: String, _ metadata: [String: String]) {
        process.notify { $0.log(message, metadata.merging(["conversation": process.conversationID]) { first, _ in first }) }
    }

    /// Claude Code closed its output but lives on: SIGTERM (so it stops its tools), then the
    /// group's SIGKILL after the grace.
    private func stopLingering() {
        guard !hasExited else { return }
        kill(pid, SIGTERM)
        let deadline = now + process.launch.session.terminateGraceMillis
        while !hasExited, now < deadline { usleep(20_000) }
    }

}
