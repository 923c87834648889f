import Foundation
import RelayCore
import RelayTransport
import Synchronization

/// Options for `clawrelay bench`.
public struct BenchOptions: Sendable {
    public var scenarios: [String] = ["roundtrip"]
    public var devices = 64
    public var window = 4
    public var seconds = 10.0
    public var fanout = 100
    public var idleConnections = 10_000
    /// Times idle reconnects every device (more than one also reports what each round leaves behind).
    public var idleRounds = 1
    /// roundtrip only: authenticated, silent devices connected during the load.
    public var idleAlongside = 0
    public var replayEvents = 10_000
    public var kills = 20
    public var fuzzFrames = 20_000
    public var baselines: [String] = []
    public var json = false
    /// Roundtrip at this many messages a second in total, open loop (nil: `window` in flight per device).
    public var rate: Double?
    /// The generator on one CPU and every relay child on another.
    public var pin = false
    /// `[server] event_loop` of the relays under test (nil: not written, the relay's default).
    public var eventLoop: EventLoopKind?
    /// The loop of the generator's own sockets (`poll`, as before the option, unless asked).
    public var generatorLoop = EventLoopKind.poll
    /// The `clawrelay` binary to start as the relay under test.
    public var binary = CommandLine.arguments[0]
    /// Where temporary data directories go.
    public var workDirectory = NSTemporaryDirectory()

    /// `--store postgres`: the relays keep their store in a PostgreSQL the bench starts (a database
    /// each); nil = SQLite, the relay's default.
    public var store: String?
    /// roundtrip, fanout and cluster-chaos: the relays as this many nodes of one cluster on one
    /// PostgreSQL database, the devices spread over them (0 = a relay on its own).
    public var nodes = 0

    public init() {}

    /// Seconds-scale settings for CI: every scenario runs, nothing is judged.
    public static func smoke() -> BenchOptions {
        var options = BenchOptions()
        options.devices = 4
        options.window = 2
        options.seconds = 1
        options.fanout = 5
        options.idleConnections = 50
        options.idleRounds = 2
        options.replayEvents = 200
        options.kills = 2
        options.fuzzFrames = 300
        return options
    }
}

/// One measured figure.
public struct BenchFigure: Sendable {
    public var scenario: String
    public var metric: String
    public var value: Double
    public var unit: String
}

/// The results of a run, as a table or JSON.
public struct BenchReport: Sendable {
    public var figures: [BenchFigure] = []
    public var notes: [String] = []

    public init() {}

    public mutating func add(_ scenario: String, _ metric: String, _ value: Double, _ unit: String) {
        figures.append(BenchFigure(scenario: scenario, metric: metric, value: value, unit: unit))
    }

    public func table() -> String {
        var lines = ["| scenario | metric | value | unit |", "|---|---|---:|---|"]
        for figure in figures {
            let value =
                figure.value >= 100 || figure.value.rounded() == figure.value
                ? String(format: "%.0f", figure.value) : String(format: "%.3f", figure.value)
            lines.append("| \(figure.scenario) | \(figure.metric) | \(value) | \(figure.unit) |")
        }
        return (lines + notes.map { "\n" + $0 }).joined(separator: "\n")
    }

    public func json() -> String {
        let items = figures.map { f in
            #"{"scenario":"\#(f.scenario)","metric":"\#(f.metric)","value":\#(f.value.isFinite ? String(f.value) : "null"),"unit":"\#(f.unit)"}"#
        }
        let notes = notes.map { "\"" + $0.replacingOccurrences(of: "\"", with: "'") + "\"" }
        return #"{"figures":[\#(items.joined(separator: ","))],"notes":[\#(notes.joined(separator: ","))]}"#
    }
}

func progress(_ message: String) {
    FileHandle.standardError.write(Data("bench: \(message)\n".utf8))
}

/// Blocks the calling (non-loop) thread until `body` reports on the loop, or `timeout` passes.
func waitOnLoop<T: Sendable>(
    _ loop: any LoopExecutor,
    timeout: Double,
    _ body: @escaping @Sendable (@escaping @Sendable (T) -> Void) -> Void
) throws -> T {
    let box = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    loop.execute {
        body { value in
            box.withLock { $0 = value }
            done.signal()
        }
    }
    guard done.wait(timeout: .now() + timeout) == .success, let value = box.withLock({ $0 }) else {
        throw BenchError("timed out after \(Int(timeout)) s")
    }
    return value
}

/// Raises the open-file limit to the hard maximum (the relay child inherits it).
func raiseFileLimit() -> Int {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    return Int(limit.rlim_cur)
}

/// A TCP socket connected to 127.0.0.1:`port`, or nil.
func connectLoopback(port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
    guard connected else {
        close(fd)
        return nil
    }
    return fd
}

/// A free loopback port, found by binding port 0 and letting it go.
func freeLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The relay's config for a bench run: limits opened up so the generator, not a rate limit, sets the pace.
func benchRelayConfig(
    port: Int = 0,
    audit: Bool,
    replayCap: Int,
    extra: String = "",
    backend: String = "echo",
    keepalive: (pingSeconds: Int, pongSeconds: Int)? = nil,
    eventLoop: EventLoopKind? = nil,
    echoDelayMillis: Int = 0
) -> String {
    """
    \(eventLoop.map { "[server]\nevent_loop = \"\($0.rawValue)\"\n" } ?? "")
    [admin]
    listen = "127.0.0.1:0"

    [clawline]
    listen = "127.0.0.1:\(port)"
    max_pending_requests = 100000
    max_replay_messages = \(max(500, replayCap))
    # The old name of max_queued_turns: a binary from before the rename (bench --binary) reads it too.
    max_queued_messages = 100000
    messages_per_second = 1000000
    typing_per_second = 1000000
    pair_requests_per_minute = 1000000
    auth_attempts_per_minute = 1000000
    max_frame_bytes = 1048576
    backend = "\(backend)"
    ping_interval_seconds = \(keepalive?.pingSeconds ?? 30)
    pong_timeout_seconds = \(keepalive?.pongSeconds ?? 90)

    [[backends]]
    name = "echo"
    kind = "echo"
    delay_ms = \(echoDelayMillis)

    [audit]
    enabled = \(audit)

    \(extra)
    """
}
