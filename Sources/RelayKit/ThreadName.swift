import Foundation

extension Thread {
    /// Names the calling thread for Foundation and for the kernel, whose name (`comm`, at most 15
    /// bytes) is what `/proc/<pid>/task/*/stat`, `top -H`, `perf` and `clawrelay bench` show.
    ///
    /// Foundation's setter alone is not enough on Linux: a name set before `start` never reached
    /// the kernel here, and one a thread set on itself as it started was lost about one relay
    /// start in three (a race in Foundation's thread start-up), leaving a thread named like the
    /// process. So the name is also written to `/proc/thread-self/comm`, the thread's own entry.
    public static func nameCurrent(_ name: String) {
        Thread.current.name = name
        guard let comm = FileHandle(forWritingAtPath: "/proc/thread-self/comm") else { return }
        defer { try? comm.close() }
        try? comm.write(contentsOf: Data(name.utf8.prefix(15)))
    }
}
