import Foundation

/// A PostgreSQL 15 server of a test's or a benchmark's own: `initdb` in a fresh temporary
/// directory and `postgres` on a free loopback port (its socket in that directory), run as
/// `nobody` when the caller is root (PostgreSQL refuses root). Databases are made with `psql`.
/// `stop()` ends it (SIGTERM, then SIGKILL after a deadline) and removes the directory.
///
/// - Important: every call blocks (child processes); call it off any event loop.
public final class LocalPostgres: @unchecked Sendable {
    // `@unchecked Sendable` holds because every property is set once in init; `process` is only
    // signalled and polled.
    public static let binaries = "/usr/lib/postgresql/15/bin"
    /// The superuser `initdb` makes; connections need no password (trust, loopback only).
    public static let user = "clawrelay"

    public let directory: String
    public let port: Int
    private let process: Process

    /// Creates the cluster and starts the server; returns once it accepts connections.
    public init(maxConnections: Int = 200) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binaries + "/postgres") else {
            throw HarnessError("PostgreSQL 15 is not installed (\(Self.binaries)/postgres); scripts/bootstrap installs it")
        }
        let directory = try Self.makeCluster()
        var lastError = HarnessError("postgres did not start")
        // A port in use makes postgres exit at once ("could not bind"): then another is tried.
        for _ in 0..<5 {
            let port = Int.random(in: 20_000...59_999)
            let process = try Self.launch(directory: directory, port: port, maxConnections: maxConnections)
            do {
                try Self.waitUntilReady(process, directory: directory, port: port)
                (self.directory, self.port, self.process) = (directory, port, process)
                return
            } catch let error as HarnessError {
                lastError = error
                Self.terminate(process, directory: directory)
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw lastError
    }

    /// A `postgres://` URL for `database` over loopback TCP.
    public func url(database: String) -> String { "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)" }

    /// Creates a fresh database; returns its name.
    public func createDatabase(prefix: String = "db") throws -> String {
        let name = prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        _ = try psql("CREATE DATABASE \(name)")
        return name
    }

    /// Runs `sql` with `psql` and returns its unaligned output.
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        let (status, output) = try Self.run(
            Self.binaries + "/psql",
            ["-h", "127.0.0.1", "-p", "\(port)", "-U", Self.user, "-d", database, "-v", "ON_ERROR_STOP=1", "-Atc", sql]
        )
        guard status == 0 else { throw HarnessError("psql failed (\(status)): \(output.suffix(2_000))") }
        return output
    }

    /// The server's processes (the postmaster and its backends), for CPU accounting from /proc.
    public func processIDs() -> [Int32] {
        guard let postmaster = Self.postmasterPID(directory) else { return [] }
        var pids: [Int32] = [postmaster]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8) else { continue }
            // The parent pid is the second field after the parenthesized command name.
            guard let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == postmaster { pids.append(pid) }
        }
        return pids
    }

    /// Stops the server and removes its directory.
    public func stop() {
        Self.terminate(process, directory: directory)
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static var runsAsRoot: Bool { getuid() == 0 }

    /// A command line run as the unprivileged user when the caller is root.
    private static func command(_ executable: String, _ arguments: [String]) -> (String, [String]) {
        runsAsRoot ? ("/usr/sbin/runuser", ["-u", "nobody", "--", executable] + arguments) : (executable, arguments)
    }

    private static func run(_ executable: String, _ arguments: [String], directory: String? = nil) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    private static func makeCluster() throws -> String {
        // Under root the server runs as `nobody`, who must reach its directory: /tmp, not a private TMPDIR.
        let parent = runsAsRoot ? "/tmp/" : NSTemporaryDirectory()
        var template = Array((parent + "clawrelay-pg-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessError("mkdtemp failed: errno \(errno)") }
        let directory = String(cString: made)
        if runsAsRoot, let nobody = getpwnam("nobody") {
            guard chown(directory, nobody.pointee.pw_uid, nobody.pointee.pw_gid) == 0 else { throw HarnessError("chown \(directory) failed") }
        }
        let (executable, arguments) = command(
            binaries + "/initdb",
            ["--no-sync", "-A", "trust", "-U", user, "-E", "UTF8", "--locale=C", "-D", directory + "/data"]
        )
        let (status, output) = try run(executable, arguments, directory: directory)
        guard status == 0 else { throw HarnessError("initdb failed (\(status)): \(output.suffix(2_000))") }
        return directory
    }

    private static func launch(directory: String, port: Int, maxConnections: Int) throws -> Process {
        let (executable, arguments) = command(
            binaries + "/postgres",
            [
                "-D", directory + "/data", "-p", "\(port)", "-k", directory, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
                "-c", "max_connections=\(maxConnections)",
            ]
        )
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        FileManager.default.createFile(atPath: directory + "/postgres.log", contents: nil)
        let log = FileHandle(forWritingAtPath: directory + "/postgres.log")
        process.standardOutput = log
        process.standardError = log
        try process.run()
        return process
    }

    /// Asks `pg_isready` until the server answers, its process exits, or 20 s pass.
    private static func waitUntilReady(_ process: Process, directory: String, port: Int) throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            guard process.isRunning else { throw HarnessError("postgres exited: \(log(directory))") }
            let (status, _) = try run(binaries + "/pg_isready", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user])
            if status == 0 { return }
            // A server starting up has nothing to wait on but its port.
            usleep(20_000)
        }
        throw HarnessError("postgres did not accept connections within 20 s: \(log(directory))")
    }

    private static func log(_ directory: String) -> String {
        String((try? String(contentsOfFile: directory + "/postgres.log", encoding: .utf8))?.suffix(2_000) ?? "")
    }

    private static func postmasterPID(_ directory: String) -> Int32? {
        let pidFile = (try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8)) ?? ""
        return pidFile.split(separator: "\n").first.flatMap { Int32($0) }
    }

    private static func terminate(_ process: Process, directory: String) {
        let pid = postmasterPID(directory) ?? 0
        if pid > 0 { kill(pid, SIGTERM) } else { process.terminate() }
        if !waitForExit(process, seconds: 10) {
            if pid > 0 { kill(pid, SIGKILL) }
            kill(process.processIdentifier, SIGKILL)
            _ = waitForExit(process, seconds: 5)
        }
    }

    private static func waitForExit(_ process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        return !process.isRunning
    }
}

/// What kept the local PostgreSQL from starting or answering.
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
