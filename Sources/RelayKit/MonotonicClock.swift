import Foundation

/// Monotonic nanoseconds (`CLOCK_MONOTONIC`, the same clock on every thread), for timing the
/// stages of a message. Never wall time: it does not jump when the system clock is set.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary start; never 0 on a running system (0 means "not stamped").
    @inline(__always)
    public static func nanos() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}
