import CSpawn
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process in its own process group (the local backends' transport: `echo`, `command`
/// and `claude-code` turns run as children), with non-blocking pipes on stdin, stdout and stderr.
///
/// - Important: Owned by one thread; only `pid` may be shared (see `ChildTurn`).
public struct ChildProcess: Sendable {
    public let pid: pid_t
    /// Parent ends, all non-blocking and close-on-exec.
    public var stdinFD: Int32
    public var stdoutFD: Int32
    public var stderrFD: Int32

    /// How a child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)
    }

    /// Starts `arguments[0]` (searched in PATH) with `environment` ("KEY=value" strings), in
    /// `directory` when given.
    ///
    /// The child gets its own process group, so `killGroup` also reaches anything it forked, and
    /// default signal handling, so it dies on SIGPIPE even if this process ignores it.
    public static func spawn(arguments: [String], environment: [String], directory: String? = nil) throws(SpawnError) -> ChildProcess {
        guard !arguments.isEmpty else { throw SpawnError(errno: EINVAL) }
        // pipe2 is not visible from Swift, so a pipe is close-on-exec only a moment after it is made.
        // Spawning one child at a time keeps a child from inheriting another turn's pipe, which would
        // keep that turn from ever seeing end of file.
        return try spawnLock.withLock { _ throws(SpawnError) in
            try spawnLocked(arguments: arguments, environment: environment, directory: directory)
        }
    }

    private static let spawnLock = Mutex(())

    private static func spawnLocked(arguments: [String], environment: [String], directory: String?) throws(SpawnError) -> ChildProcess {
        let (stdin, stdout, stderr) = try makePipes()
        let childEnds = [stdin.read, stdout.write, stderr.write]
        defer { for end in childEnds { _ = close(end) } }

        #if os(Linux)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #else
        var actions: posix_spawn_file_actions_t?
        var attributes: posix_spawnattr_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        for (target, source) in childEnds.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, source, Int32(target))
        }
        if let directory { relay_spawn_addchdir(&actions, directory) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaultSignals, signal) }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, argv[0]!, &actions, &attributes, argv, envp)
        guard result == 0 else {
            for end in [stdin.write, stdout.read, stderr.read] { _ = close(end) }
            throw SpawnError(errno: result)
        }
        [stdin.write, stdout.read, stderr.read].forEach(setNonBlocking)
        return ChildProcess(pid: pid, stdinFD: stdin.write, stdoutFD: stdout.read, stderrFD: stderr.read)
    }

    /// Sends SIGKILL to the child's whole process group.
    ///
    /// - Important: Only before the child is reaped; afterwards its pid may belong to someone else.
    public static func killGroup(_ pid: pid_t) {
        _ = kill(-pid, SIGKILL)
    }

    /// Whether the child has ended, without reaping it (so its process group id stays reserved).
    public func hasExited() -> Bool {
        var info = siginfo_t()
        let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
        return result == 0 && info.si_signo == SIGCHLD
    }

    /// Waits for the child to end and reaps it.
    public func reap() -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return .signaled(SIGKILL) }
        }
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    private typealias Pipe = (read: Int32, write: Int32)

    private static func makePipes() throws(SpawnError) -> (Pipe, Pipe, Pipe) {
        var pipes: [Pipe] = []
        do {
            for _ in 0..<3 { pipes.append(try makePipe()) }
        } catch {
            for pipe in pipes {
                _ = close(pipe.read)
                _ = close(pipe.write)
            }
            throw error
        }
        return (pipes[0], pipes[1], pipes[2])
    }

    private static func makePipe() throws(SpawnError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw SpawnError(errno: errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }
}

/// Why a child could not be started.
public struct SpawnError: Error, CustomStringConvertible, Sendable {
    public let errno: Int32

    public var description: String { String(cString: strerror(errno)) }
}

/// Makes a parent-side pipe end non-blocking; the child's ends stay blocking.
private func setNonBlocking(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
}
