import Foundation
import RelayKit

/// Deadlines kept in order; the loop fires the due ones.
///
/// Not thread-safe: owned by the service thread.
struct TimerQueue {
    private struct Entry {
        var deadline: UInt64
        var id: UInt64
        var job: () -> Void
    }

    private var entries: [UInt64: Entry] = [:]
    private var order: [(deadline: UInt64, id: UInt64)] = []
    private var nextID: UInt64 = 1

    var earliest: UInt64? { order.first?.deadline }

    mutating func add(deadline: UInt64, job: @escaping () -> Void) -> TimerID {
        let id = nextID
        nextID += 1
        entries[id] = Entry(deadline: deadline, id: id, job: job)
        let index = order.firstIndex { $0.deadline > deadline } ?? order.count
        order.insert((deadline, id), at: index)
        return TimerID(raw: id)
    }

    mutating func cancel(_ timer: TimerID) {
        guard entries.removeValue(forKey: timer.raw) != nil else { return }
        order.removeAll { $0.id == timer.raw }
    }

    /// Removes and returns the jobs due at `now`, earliest first.
    mutating func popDue(now: UInt64) -> [() -> Void] {
        var due: [() -> Void] = []
        while let first = order.first, first.deadline <= now {
            order.removeFirst()
            if let entry = entries.removeValue(forKey: first.id) { due.append(entry.job) }
        }
        return due
    }
}

/// Monotonic microseconds.
func monotonicMicros() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
}
