import CAffinity
import Foundation

/// `--pin`: the generator on one CPU, the relay children on another (what `taskset -c` does,
/// through `sched_setaffinity`).
struct CPUPinning: Sendable {
    let generator: Int
    let relay: Int

    /// The first two CPUs this process may use: the generator gets the first, the relays the second.
    static func choose() throws -> CPUPinning {
        let cpus = allowedCPUs()
        guard cpus.count >= 2 else {
            let allowed = cpus.count == 1 ? "only CPU \(cpus[0])" : "no CPU it can read"
            throw BenchError(
                "--pin needs two CPUs, one for the generator and one for the relay; this process may run on \(allowed) (sched_getaffinity)"
            )
        }
        return CPUPinning(generator: cpus[0], relay: cpus[1])
    }

    /// The CPUs thread `tid` (0: the caller) may run on, lowest first.
    static func allowedCPUs(of tid: Int32 = 0) -> [Int] {
        var cpus = [Int32](repeating: 0, count: 1024)
        let count = relay_allowed_cpus(tid, &cpus, Int32(cpus.count))
        return count > 0 ? cpus.prefix(Int(count)).map(Int.init) : []
    }

    /// Pins every thread of process `pid` to `cpu` (threads it starts later inherit it from theirs).
    static func pin(process pid: Int32, to cpu: Int) throws {
        let tids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")).map { $0.compactMap { Int32($0) } } ?? []
        guard !tids.isEmpty else { throw BenchError("--pin: no threads of process \(pid) in /proc") }
        // A thread that ended since the folder was read is no error.
        for tid in tids where relay_pin_to_cpu(tid, Int32(cpu)) != 0 && errno != ESRCH {
            throw BenchError("--pin: cannot pin thread \(tid) of process \(pid) to CPU \(cpu): \(String(cString: strerror(errno)))")
        }
    }

    /// Pins the calling thread to `cpu`.
    static func pinCallingThread(to cpu: Int) throws {
        guard relay_pin_to_cpu(0, Int32(cpu)) == 0 else {
            throw BenchError("--pin: cannot pin this thread to CPU \(cpu): \(String(cString: strerror(errno)))")
        }
    }
}
