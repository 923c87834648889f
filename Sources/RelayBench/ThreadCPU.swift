import Foundation

/// One thread's CPU time, from a line of `/proc/<pid>/task/<tid>/stat`.
struct ThreadStat: Equatable, Sendable {
    var tid: Int32
    /// The thread's name (`comm`, at most 15 bytes).
    var name: String
    /// User plus system time, in clock ticks.
    var ticks: UInt64

    /// Parses `tid (comm) state ppid … utime stime …`. The name may hold spaces and
    /// parentheses, so it runs to the last `)`; utime and stime are fields 14 and 15.
    static func parse(_ line: String) -> ThreadStat? {
        guard let open = line.firstIndex(of: "("), let close = line.lastIndex(of: ")"), open < close,
            let tid = Int32(line[..<open].trimmingCharacters(in: .whitespaces))
        else { return nil }
        let fields = line[line.index(after: close)...].split(separator: " ")
        // fields[0] is the state (field 3), so field n is fields[n - 3].
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return ThreadStat(tid: tid, name: String(line[line.index(after: open)..<close]), ticks: user + system)
    }

    /// Every thread of process `pid` now (threads that end while the folder is read are skipped).
    static func read(pid: Int32) -> [ThreadStat] {
        let folder = "/proc/\(pid)/task"
        guard let tids = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        return tids.compactMap { tid in
            (try? String(contentsOfFile: "\(folder)/\(tid)/stat", encoding: .utf8)).flatMap(parse)
        }
    }
}

/// CPU per thread name of one process over a window, from /proc (a 10 ms tick is the grain).
struct ThreadCPUMeter {
    /// One thread name's share of the window.
    struct Usage: Equatable, Sendable {
        var name: String
        var seconds: Double
        /// Threads of that name seen during the window.
        var threads: Int
    }

    private let pid: Int32
    private let start: [ThreadStat]

    init(pid: Int32) {
        self.pid = pid
        start = ThreadStat.read(pid: pid)
    }

    /// CPU seconds per thread name since `init`, the busiest first.
    func used() -> [Usage] {
        Self.usage(from: start, to: ThreadStat.read(pid: pid), ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// What each thread name used between two readings. A thread that started meanwhile counts
    /// whole; one that ended meanwhile is missing from `to` and its time is lost here (the
    /// process total in `/proc/<pid>/stat` keeps it).
    static func usage(from start: [ThreadStat], to end: [ThreadStat], ticksPerSecond: Double) -> [Usage] {
        var before: [Int32: ThreadStat] = [:]
        for stat in start { before[stat.tid] = stat }
        var byName: [String: Usage] = [:]
        for stat in end {
            // A tid reused by a new thread of another name started from zero.
            let base = before[stat.tid].flatMap { $0.name == stat.name && $0.ticks <= stat.ticks ? $0.ticks : nil } ?? 0
            byName[stat.name, default: Usage(name: stat.name, seconds: 0, threads: 0)].seconds += Double(stat.ticks - base) / ticksPerSecond
            byName[stat.name]?.threads += 1
        }
        return byName.values.sorted { ($0.seconds, $1.name) > ($1.seconds, $0.name) }
    }
}
