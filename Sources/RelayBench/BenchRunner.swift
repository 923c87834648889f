import Foundation
import Logging
import PostgresHarness
import RelayCore
import RelayTransport

/// Runs the bench scenarios against relays it starts itself, from one generator loop.
public final class BenchRunner {
    let options: BenchOptions
    let loop: ServiceLoop
    var report = BenchReport()
    private var runCounter = 0
    /// `--pin`: where the generator and the relays run.
    private var pinning: CPUPinning?
    /// `--store postgres`: the server the relays' databases live on, started on first use.
    private(set) var postgres: LocalPostgres?

    public init(options: BenchOptions) {
        self.options = options
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        loop = ServiceLoop(logger: logger, eventLoop: options.generatorLoop)
    }

    /// Every scenario name `run` knows; `all` is the first six.
    public static let scenarioNames = ["roundtrip", "fanout", "idle", "replay", "audit", "gateway", "chaos", "fuzz", "cluster-chaos", "all"]

    public func run() throws -> BenchReport {
        let files = raiseFileLimit()
        if options.pin {
            let pinning = try CPUPinning.choose()
            // Before the loop starts, so its thread inherits the CPU.
            try CPUPinning.pin(process: getpid(), to: pinning.generator)
            self.pinning = pinning
            progress("generator pinned to CPU \(pinning.generator), relays to CPU \(pinning.relay)")
        }
        _ = try loop.start()
        defer { loop.stop(graceMillis: 500) }
        defer { postgres?.stop() }
        progress("open-file limit \(files); generator on one lws service thread")
        let all = Array(Self.scenarioNames.prefix(6))
        let scenarios = options.scenarios.flatMap { $0 == "all" ? all : [$0] }
        for scenario in scenarios {
            let started = Date()
            switch scenario {
            case "roundtrip": try options.nodes > 0 ? clusterRoundtrip() : roundtrip()
            case "fanout": try options.nodes > 0 ? clusterFanout() : fanout()
            case "idle": try idle()
            case "replay": try replay()
            case "audit": try auditRatio()
            case "chaos": try chaos()
            case "fuzz": try fuzz()
            case "cluster-chaos": try clusterChaos()
            case "gateway": try gateway()
            default: throw BenchError("unknown scenario \(scenario) (\(Self.scenarioNames.joined(separator: ", ")))")
            }
            progress("\(scenario) done in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        }
        for baseline in options.baselines {
            try runBaseline(baseline)
        }
        return report
    }

    /// A fresh relay on a fresh data directory.
    func startRelay(
        audit: Bool = true,
        replayCap: Int = 500,
        port: Int = 0,
        extra: String = "",
        backend: String = "echo",
        keepalive: (pingSeconds: Int, pongSeconds: Int)? = nil,
        store: String? = nil,
        echoDelayMillis: Int = 0
    ) throws -> RelayProcess {
        runCounter += 1
        let work = (options.workDirectory as NSString).appendingPathComponent("clawrelay-bench-\(getpid())-\(runCounter)")
        let extra = extra + (try store ?? storeSection())
        let relay = try RelayProcess(
            binary: options.binary,
            workDirectory: work,
            config: benchRelayConfig(
                port: port,
                audit: audit,
                replayCap: replayCap,
                extra: extra,
                backend: backend,
                keepalive: keepalive,
                eventLoop: options.eventLoop,
                echoDelayMillis: echoDelayMillis
            )
        )
        try relay.start(pinning: pinning)
        return relay
    }

    /// The `[store]` a relay gets: none for SQLite; for PostgreSQL a fresh database on the bench's
    /// own server.
    func storeSection() throws -> String {
        guard options.store == "postgres" || options.nodes > 0 else { return "" }
        if postgres == nil {
            progress("store: starting a PostgreSQL 15 of the bench's own (initdb, loopback)")
            postgres = try LocalPostgres()
        }
        guard let postgres else { return "" }
        return "\n[store]\nkind = \"postgres\"\nurl = \"\(postgres.url(database: try postgres.createDatabase(prefix: "bench")))\"\n"
    }

    func target(_ relay: RelayProcess) -> ServiceLoop.ClientTarget {
        ServiceLoop.ClientTarget(host: "127.0.0.1", port: relay.clawlinePort, path: "/ws")
    }

    /// Pairs and authenticates `count` devices on `relay`.
    func provision(_ relay: RelayProcess, count: Int, sameUser: Bool, concurrency: Int = 64) throws -> UncheckedBox<[BenchDevice]> {
        let (loop, relayTarget) = (self.loop, target(relay))
        let outcome: UncheckedBox<Result<[BenchDevice], BenchError>> = try waitOnLoop(loop, timeout: 600) { done in
            let fleet = Fleet(loop: loop, target: relayTarget)
            fleet.provision(count: count, sameUser: sameUser, concurrency: concurrency) { result in
                _ = fleet
                done(UncheckedBox(result))
            }
        }
        return UncheckedBox(try outcome.value.get())
    }

    /// Runs a roundtrip driver to completion and returns its result.
    func drive(_ devices: UncheckedBox<[BenchDevice]>, window: Int, seconds: Double, prefix: String) throws -> RoundtripDriver.Result {
        try waitOnLoop(loop, timeout: seconds + 120) { done in
            let driver = RoundtripDriver(devices: devices.value, window: window, durationSeconds: seconds, prefix: prefix)
            driver.run { result in
                _ = driver
                done(result)
            }
        }
    }

    func roundtrip() throws {
        let relay = try startRelay()
        defer { relay.stop() }
        progress("roundtrip: pairing \(options.devices) devices")
        // Idle devices connected alongside the load (one fleet: its first device approves the
        // rest): what a relay with many phones online but quiet pays per message.
        if options.idleAlongside > 0 { progress("roundtrip: and \(options.idleAlongside) idle devices alongside") }
        let fleet = try provision(
            relay,
            count: options.devices + options.idleAlongside,
            sameUser: false,
            concurrency: options.idleAlongside > 0 ? 128 : 64
        )
        defer { release(fleet) }
        let devices = UncheckedBox(Array(fleet.value.prefix(options.devices)))
        let cpu = CPUMeter()
        let relayCPU = RelayCPUMeter(relay)
        let databaseCPU = postgres.map { DatabaseCPUMeter($0) }
        let threads = ThreadCPUMeter(pid: relay.pid)
        let store = StoreCounters.parse(relay.metrics())
        let result: RoundtripDriver.Result
        if let rate = options.rate {
            progress("roundtrip: \(rate) messages/s open loop over \(options.devices) devices for \(options.seconds) s")
            result = try driveAtRate(devices, rate: rate, seconds: options.seconds, prefix: "rt")
        } else {
            progress("roundtrip: \(options.devices) devices × \(options.window) in flight for \(options.seconds) s")
            result = try drive(devices, window: options.window, seconds: options.seconds, prefix: "rt")
        }
        let used = relayCPU.used
        let databaseUsed = databaseCPU?.used
        let perThread = threads.used()
        let storeWindow = StoreCounters.parse(relay.metrics()).since(store)
        record("roundtrip", result, generatorCPU: cpu.share, relayCPU: used)
        if let databaseUsed { recordDatabase("roundtrip", databaseUsed, relayCPU: used.cpu, wall: used.wall, messages: result.completed) }
        if let rate = options.rate { recordRate("roundtrip", result, target: rate) }
        recordThreads("roundtrip", perThread, processCPU: used.cpu, wall: used.wall, messages: result.completed)
        recordStore("roundtrip", storeWindow, wall: used.wall, messages: result.completed)
        recordStages("roundtrip", relay)
        if options.idleAlongside > 0 { report.add("roundtrip", "idle_alongside", Double(options.idleAlongside), "authenticated sockets") }
    }

    /// The database's share of a run on PostgreSQL, and relay + database CPU per message (what the
    /// issue's "CPU per message ≤ 2×" compares with a SQLite relay's own).
    func recordDatabase(_ scenario: String, _ databaseCPU: Double, relayCPU: Double, wall: Double, messages: Int) {
        guard wall > 0 else { return }
        report.add(scenario, "postgres_cpu", databaseCPU / wall * 100, "% of one core")
        guard messages > 0 else { return }
        report.add(scenario, "postgres_cpu_per_message", databaseCPU / Double(messages) * 1e6, "µs")
        report.add(scenario, "relay_and_postgres_cpu_per_message", (relayCPU + databaseCPU) / Double(messages) * 1e6, "µs")
    }

    /// The figures of one roundtrip-style run. `item` names what one completion is ("messages",
    /// "turns"); `framesPerItem`, when known, adds a frames/s line for comparison with the baselines.
    func record(
        _ scenario: String,
        _ result: RoundtripDriver.Result,
        generatorCPU: Double,
        relayCPU: (cpu: Double, wall: Double)? = nil,
        item: String = "messages",
        framesPerItem: Int? = 8
    ) {
        let rate = result.seconds > 0 ? Double(result.completed) / result.seconds : 0
        report.add(scenario, item, Double(result.completed), "count")
        report.add(scenario, "throughput", rate, "\(item)/s")
        if let framesPerItem { report.add(scenario, "frames", rate * Double(framesPerItem), "frames/s (1 in, \(framesPerItem - 1) out per message)") }
        for (key, value) in result.ack.summary("send_to_ack").merging(result.final.summary("send_to_final"), uniquingKeysWith: { a, _ in a })
            .sorted(by: { $0.key < $1.key })
        {
            report.add(scenario, key, value, "ms")
        }
        report.add(scenario, "generator_cpu", generatorCPU * 100, "% of one core")
        if let relayCPU, relayCPU.wall > 0 {
            report.add(scenario, "relay_cpu", relayCPU.cpu / relayCPU.wall * 100, "% of one core")
            if result.completed > 0 { report.add(scenario, "relay_cpu_per_\(item.dropLast())", relayCPU.cpu / Double(result.completed) * 1e6, "µs") }
        }
        if result.failures > 0 { report.add(scenario, "failed_devices", Double(result.failures), "count") }
    }
}

/// Carries a loop-only value through a Sendable callback that is read back on the same loop.
/// `@unchecked Sendable` holds because producer and consumer both run on the generator loop.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
