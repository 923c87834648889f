import Foundation
import PostgresHarness

/// Latency samples in microseconds, summarized as percentiles.
struct LatencyRecorder: Sendable {
    private(set) var samples: [UInt64] = []

    mutating func record(_ micros: UInt64) { samples.append(micros) }

    mutating func merge(_ other: LatencyRecorder) { samples += other.samples }

    var count: Int { samples.count }

    /// p in 0...100, in milliseconds; nil without samples.
    func percentile(_ p: Double) -> Double? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let rank = min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))
        return Double(sorted[rank]) / 1000
    }

    func summary(_ name: String) -> [String: Double] {
        var out: [String: Double] = [:]
        for (label, p) in [("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9)] {
            if let value = percentile(p) { out["\(name)_\(label)_ms"] = value }
        }
        return out
    }
}

/// Process CPU time, to show whether the load generator itself was the limit.
/// The relay process's own CPU over a load window, from /proc.
struct RelayCPUMeter {
    private let relay: RelayProcess
    private let startCPU: Double
    private let startWall: Double

    init(_ relay: RelayProcess) {
        self.relay = relay
        startCPU = relay.cpuSeconds()
        startWall = CPUMeter.wallSeconds()
    }

    /// CPU seconds the relay used since `init`, and the wall seconds that took.
    var used: (cpu: Double, wall: Double) { (relay.cpuSeconds() - startCPU, CPUMeter.wallSeconds() - startWall) }
}

struct CPUMeter {
    private let startCPU: Double
    private let startWall: Double

    init() {
        startCPU = CPUMeter.processSeconds()
        startWall = CPUMeter.wallSeconds()
    }

    /// CPU seconds used per wall second since `init` (1.0 = one core busy).
    var share: Double {
        let wall = CPUMeter.wallSeconds() - startWall
        return wall > 0 ? (CPUMeter.processSeconds() - startCPU) / wall : 0
    }

    static func processSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func wallSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

func nowMicros() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
}

/// The bench's PostgreSQL's CPU (the postmaster and every backend) over a load window, from /proc.
struct DatabaseCPUMeter {
    private let server: LocalPostgres
    private let start: [Int32: Double]

    init(_ server: LocalPostgres) {
        self.server = server
        start = Self.reading(server)
    }

    /// CPU seconds the server's processes used since `init` (a backend that started meanwhile counts whole).
    var used: Double {
        Self.reading(server).reduce(0) { total, entry in total + entry.value - (start[entry.key] ?? 0) }
    }

    private static func reading(_ server: LocalPostgres) -> [Int32: Double] {
        var seconds: [Int32: Double] = [:]
        for pid in server.processIDs() { seconds[pid] = RelayProcess.cpuSeconds(pid: pid) }
        return seconds
    }
}
