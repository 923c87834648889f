import ArgumentParser
import Foundation
import RelayBench
import RelayTransport

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure the relay: roundtrip, fanout, idle, replay, audit, chaos, fuzz, with baselines.",
        discussion: "Starts its own relays on loopback with temporary data directories and the echo backend."
    )

    @Argument(
        help:
            "Scenarios: roundtrip, fanout, idle, replay, audit, gateway, chaos, fuzz, cluster-chaos (nodes on PostgreSQL), all (the first six), store (the store writer alone)."
    )
    var scenarios: [String] = ["all"]
    @Option(help: "Devices for roundtrip/audit/chaos (and baseline connections).") var devices: Int?
    @Option(help: "Messages in flight per device.") var window: Int?
    @Option(help: "Seconds of load per scenario.") var seconds: Double?
    @Option(help: "Devices of the one user in fanout.") var fanout: Int?
    @Option(help: "Authenticated connections in idle.") var connections: Int?
    @Option(name: .customLong("idle-rounds"), help: "Times idle reconnects every device (more than one reports the RSS each round leaves behind).")
    var idleRounds: Int?
    @Option(name: .customLong("idle-alongside"), help: "roundtrip only: authenticated idle devices kept connected during the load.")
    var idleAlongside: Int?
    @Option(name: .customLong("replay-events"), help: "Events behind in replay.") var replayEvents: Int?
    @Option(help: "kill -9 rounds in chaos.") var kills: Int?
    @Option(name: .customLong("fuzz-frames"), help: "Mutated frames in fuzz.") var fuzzFrames: Int?
    @Option(help: "Baselines to run after the scenarios: direct, nginx (comma-separated).") var baseline: String?
    @Option(help: "The relay binary to start and measure (default: this one), to compare two builds with one generator.") var relay: String?
    @Option(help: "roundtrip only: messages a second in total, sent open loop (latency from each due time), not --window per device.")
    var rate: Double?
    @Option(help: "store only: messages per transaction (of as many users).") var batch: Int?
    @Option(help: "store only: messages to store.") var messages: Int?
    @Option(help: "store only: away devices per user, each event queued for them.") var away: Int?
    @Option(help: "The relays' store: sqlite (default) or postgres (a PostgreSQL 15 the bench starts itself, a database per relay).")
    var store: String?
    @Option(
        help: "roundtrip, fanout, cluster-chaos: run the relays as this many nodes of one cluster on one PostgreSQL (1-8; implies --store postgres)."
    )
    var nodes: Int?
    @Flag(help: "Run the generator on one CPU and the relays on another (needs two CPUs).") var pin = false
    @Flag(help: "Seconds-scale sizes for CI: every code path runs, nothing is judged.") var smoke = false
    @Flag(help: "Print the report as JSON.") var json = false
    @Option(name: .customLong("event-loop"), help: "The relays' [server] event_loop: poll or epoll (default: not written, the relay's default).")
    var eventLoop: String?
    @Option(name: .customLong("generator-loop"), help: "The event loop of the generator's own sockets: poll (default) or epoll.")
    var generatorLoop: String?

    func validate() throws {
        if let unknown = scenarios.first(where: { !BenchRunner.scenarioNames.contains($0) && $0 != "store" }) {
            throw ValidationError("unknown scenario \(unknown) (\((BenchRunner.scenarioNames + ["store"]).joined(separator: ", ")))")
        }
        for (name, value) in [("--batch", batch), ("--messages", messages), ("--away", away)] {
            if let value, value < (name == "--away" ? 0 : 1) {
                throw ValidationError("\(name) \(value): give a count of at least \(name == "--away" ? 0 : 1)")
            }
        }
        if let store, !["sqlite", "postgres"].contains(store) { throw ValidationError("--store \(store): give sqlite or postgres") }
        if scenarios.contains("cluster-chaos"), store == "sqlite" {
            throw ValidationError("cluster-chaos: the nodes of a cluster share a PostgreSQL, not SQLite")
        }
        if let nodes {
            guard (1...8).contains(nodes) else { throw ValidationError("--nodes \(nodes): give 1 to 8") }
            if let other = scenarios.first(where: { !["roundtrip", "fanout", "cluster-chaos"].contains($0) }) {
                throw ValidationError("--nodes \(nodes): \(other) runs on one relay; roundtrip, fanout and cluster-chaos run on cluster nodes")
            }
            if store == "sqlite" { throw ValidationError("--nodes \(nodes): the nodes of a cluster share a PostgreSQL, not SQLite") }
        }
        if let rate, !(rate > 0 && rate.isFinite) { throw ValidationError("--rate \(rate): give a number of messages a second above 0") }
        for (option, value) in [("--event-loop", eventLoop), ("--generator-loop", generatorLoop)] {
            if let value, EventLoopKind(rawValue: value) == nil { throw ValidationError("\(option) \(value): give poll or epoll") }
        }
    }

    func run() throws {
        var options = smoke ? BenchOptions.smoke() : BenchOptions()
        options.scenarios = scenarios.filter { $0 != "store" }
        if let devices { options.devices = devices }
        if let window { options.window = window }
        if let seconds { options.seconds = seconds }
        if let fanout { options.fanout = fanout }
        if let connections { options.idleConnections = connections }
        if let idleRounds { options.idleRounds = max(1, min(idleRounds, 100)) }
        if let idleAlongside { options.idleAlongside = max(0, min(idleAlongside, 50_000)) }
        if let replayEvents { options.replayEvents = replayEvents }
        if let kills { options.kills = kills }
        if let fuzzFrames { options.fuzzFrames = fuzzFrames }
        if let baseline { options.baselines = baseline.split(separator: ",").map(String.init) }
        if let rate { options.rate = rate }
        options.eventLoop = eventLoop.flatMap(EventLoopKind.init(rawValue:))
        if let loop = generatorLoop.flatMap(EventLoopKind.init(rawValue:)) { options.generatorLoop = loop }
        options.pin = pin
        options.store = store == "postgres" || nodes != nil || scenarios.contains("cluster-chaos") ? "postgres" : nil
        if let nodes { options.nodes = nodes }
        options.binary = relay ?? URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        guard FileManager.default.isExecutableFile(atPath: options.binary) else { fail("--relay \(options.binary): not an executable file") }
        var report = BenchReport()
        do {
            if !options.scenarios.isEmpty { report = try BenchRunner(options: options).run() }
            if scenarios.contains("store") {
                try BenchStore.run(users: devices, batch: batch, messages: messages, away: away, smoke: smoke, into: &report)
            }
        } catch { fail("\(error)") }
        print(json ? report.json() : report.table())
    }
}
