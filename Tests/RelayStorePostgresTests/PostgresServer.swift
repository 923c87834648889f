import Foundation
import Logging
import PostgresNIO
import RelayStorePostgres

/// A PostgreSQL 15 server of the tests' own: `initdb` in a fresh temporary directory, `postgres` on
/// a loopback port that was free with its socket in that directory, run as `nobody` when the tests run as
/// root (PostgreSQL refuses root). Stopped with SIGTERM, SIGKILL after a deadline, and removed.
///
/// - Important: every blocking step (child processes, waiting for them) runs on a thread of its
///   own, never on the cooperative pool.
final class PostgresServer: @unchecked Sendable {
    // @unchecked: every property is set once in init; `process` is only signalled and polled.
    static let binaries = "/usr/lib/postgresql/15/bin"
    static let user = "clawrelay"

    let directory: String
    let port: Int
    private let process: Process

    private init(directory: String, port: Int, process: Process) {
        self.directory = directory
        self.port = port
        self.process = process
    }

    /// Creates the cluster and starts the server; returns once it accepts connections.
    static func start(logger: Logger) async throws -> PostgresServer {
        let directory = try await BlockingWork.run { try makeCluster() }
        var lastError: any Error = FixtureError("postgres did not start")
        // A port in use makes postgres exit at once ("could not bind"): then the next one is tried.
        for _ in 0..<5 {
            let port = Int.random(in: 20_000...59_999)
            let process = try await BlockingWork.run { try launch(directory: directory, port: port) }
            let server = PostgresServer(directory: directory, port: port, process: process)
            do {
                try await server.waitUntilReady(logger: logger)
                return server
            } catch {
                lastError = error
                await BlockingWork.perform { server.terminate() }
            }
        }
        await BlockingWork.perform { try? FileManager.default.removeItem(atPath: directory) }
        throw lastError
    }

    /// Settings for `database` over loopback TCP.
    func settings(database: String) throws -> PostgresSettings {
        try PostgresSettings(url: "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)")
    }

    /// Stops the server and removes its directory (blocking: call it off the cooperative pool).
    func stop() {
        terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func terminate() {
        let pidFile = (try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8)) ?? ""
        let pid = pid_t(pidFile.split(separator: "\n").first.flatMap { Int32($0) } ?? 0)
        if pid > 0 { kill(pid, SIGTERM) } else { process.terminate() }
        if !waitForExit(seconds: 10) {
            if pid > 0 { kill(pid, SIGKILL) }
            kill(process.processIdentifier, SIGKILL)
            _ = waitForExit(seconds: 5)
        }
    }

    private func waitForExit(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        return !process.isRunning
    }

    /// Polls a connection until the server answers, the process exits, or 20 s pass.
    private func waitUntilReady(logger: Logger) async throws {
        let settings = try settings(database: "postgres")
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            guard process.isRunning else { throw FixtureError("postgres exited: \(log())") }
            if let connection = try? await PostgresConnection.connect(
                configuration: settings.configuration(applicationName: "fixture"),
                id: 0,
                logger: logger
            ) {
                try? await connection.close()
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw FixtureError("postgres did not accept connections within 20 s: \(log())")
    }

    private func log() -> String {
        String((try? String(contentsOfFile: directory + "/postgres.log", encoding: .utf8))?.suffix(2_000) ?? "")
    }

    private static var runsAsRoot: Bool { getuid() == 0 }

    /// A command line run as the unprivileged user when the tests are root.
    private static func command(_ arguments: [String]) -> (String, [String]) {
        runsAsRoot ? ("/usr/sbin/runuser", ["-u", "nobody", "--"] + arguments) : (arguments[0], Array(arguments.dropFirst()))
    }

    private static func makeCluster() throws -> String {
        var template = Array((NSTemporaryDirectory() + "clawrelay-pg-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw FixtureError("mkdtemp failed: errno \(errno)") }
        let directory = String(cString: made)
        if runsAsRoot, let nobody = getpwnam("nobody") {
            guard chown(directory, nobody.pointee.pw_uid, nobody.pointee.pw_gid) == 0 else { throw FixtureError("chown \(directory) failed") }
        }
        let (executable, arguments) = command([
            binaries + "/initdb", "--no-sync", "-A", "trust", "-U", user, "-E", "UTF8", "--locale=C", "-D", directory + "/data",
        ])
        let initdb = Process()
        initdb.executableURL = URL(fileURLWithPath: executable)
        initdb.arguments = arguments
        initdb.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        initdb.standardOutput = output
        initdb.standardError = output
        try initdb.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        initdb.waitUntilExit()
        guard initdb.terminationStatus == 0 else { throw FixtureError("initdb failed (\(initdb.terminationStatus)): \(text.suffix(2_000))") }
        return directory
    }

    private static func launch(directory: String, port: Int) throws -> Process {
        let (executable, arguments) = command([
            binaries + "/postgres", "-D", directory + "/data", "-p", "\(port)", "-k", directory, "-c", "listen_addresses=127.0.0.1",
            "-c", "fsync=off", "-c", "max_connections=200",
        ])
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
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs blocking work on a thread of its own and resumes the caller with its result.
enum BlockingWork {
    static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.name = "postgres-fixture"
            thread.start()
        }
    }

    static func perform(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { continuation in
            Thread {
                work()
                continuation.resume()
            }
            .start()
        }
    }
}
