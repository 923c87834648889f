import Foundation

/// A `clawrelay serve` child started by the bench on a temporary data directory.
final class RelayProcess {
    let dataDirectory: String
    let configPath: String
    private let binary: String
    private let workDirectory: String
    private var process: Process?
    private(set) var clawlinePort = 0
    private(set) var adminPort = 0
    private(set) var gatewayPort = 0
    private(set) var companionPort = 0
    private(set) var discoClawPort = 0

    init(binary: String, workDirectory: String, config: String) throws {
        self.binary = binary
        self.workDirectory = workDirectory
        dataDirectory = (workDirectory as NSString).appendingPathComponent("data")
        configPath = (workDirectory as NSString).appendingPathComponent("relay.toml")
        // Private like everything the relay writes (the relay makes its data directory 0700 itself).
        try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    var pid: Int32 { process?.processIdentifier ?? 0 }

    /// Starts the relay and waits for its ready line; with `pinning`, on the relay's CPU.
    func start(timeout: Double = 30, pinning: CPUPinning? = nil) throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: binary)
        child.arguments = ["serve", "--config", configPath, "--data-dir", dataDirectory]
        let stdout = Pipe()
        child.standardOutput = stdout
        child.standardError = FileHandle(forWritingAtPath: "/dev/null")
        if let pinning {
            // The child inherits the spawning thread's CPUs, so every thread it starts is on the relay's CPU from the first.
            try CPUPinning.pinCallingThread(to: pinning.relay)
            defer { try? CPUPinning.pinCallingThread(to: pinning.generator) }
            try child.run()
            try CPUPinning.pin(process: child.processIdentifier, to: pinning.relay)
        } else {
            try child.run()
        }
        process = child
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = Data()
        while Date() < deadline {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffer += chunk
            guard let line = String(data: buffer, encoding: .utf8)?.split(separator: "\n").first(where: { $0.hasPrefix("clawrelay ready") })
            else { continue }
            for field in line.split(separator: " ") {
                let pair = field.split(separator: "=")
                guard pair.count == 2, let port = pair[1].split(separator: ":").last.flatMap({ Int($0) }) else { continue }
                if pair[0] == "clawline" { clawlinePort = port }
                if pair[0] == "admin" { adminPort = port }
                if pair[0] == "gateway" { gatewayPort = port }
                if pair[0] == "companion" { companionPort = port }
                if pair[0] == "discoclaw" { discoClawPort = port }
            }
            return
        }
        child.terminate()
        throw BenchError("the relay did not print its ready line within \(Int(timeout)) s")
    }

    /// Open file descriptors of the relay, from /proc.
    func openFileDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    var isRunning: Bool { process?.isRunning ?? false }

    /// CPU seconds (user + system, every thread) the relay has used, from /proc.
    func cpuSeconds() -> Double { Self.cpuSeconds(pid: pid) }

    /// CPU seconds (user + system, every thread) process `pid` has used, from /proc; 0 once it is gone.
    static func cpuSeconds(pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return 0 }
        // Fields after "(comm)": state is field 3, utime 14 and stime 15 (in clock ticks).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident set size of the relay in bytes, from /proc.
    func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let number = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return number * 1024
        }
        return 0
    }

    /// The admin listener's `/metrics` text (empty when it cannot be read).
    func metrics() -> String {
        guard let fd = connectLoopback(port: adminPort) else { return "" }
        defer { close(fd) }
        let request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        return String(decoding: response, as: UTF8.self)
    }

    /// SIGKILL, no chance to flush: what the chaos run does to it.
    func kill() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM and wait for a clean exit.
    func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit {
        stop()
        // CLAWRELAY_BENCH_KEEP=1 keeps the relay's data directory (audit, store) for inspection.
        if ProcessInfo.processInfo.environment["CLAWRELAY_BENCH_KEEP"] == nil { try? FileManager.default.removeItem(atPath: workDirectory) }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
