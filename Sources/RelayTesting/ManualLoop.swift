import RelayCore
import Synchronization

/// A loop for tests: jobs run when the test says so, timers fire when the test clock is advanced.
///
/// `@unchecked Sendable` holds because a test drives it from one task at a time; jobs posted from
/// other threads go through the locked mailbox.
public final class ManualLoop: LoopScheduler, @unchecked Sendable {
    public let clock: TestClock
    private let mailbox = Mailbox()
    private var timers: [(deadline: Int64, id: UInt64, job: () -> Void)] = []
    private var nextTimer: UInt64 = 0

    public init(clock: TestClock = TestClock()) { self.clock = clock }

    public var isOnLoop: Bool { true }

    public func execute(_ job: @escaping @Sendable () -> Void) { mailbox.post(job) }

    @discardableResult
    public func schedule(afterMillis delay: Int, _ job: @escaping () -> Void) -> TimerID {
        nextTimer += 1
        let (sum, overflow) = clock.nowMillis().addingReportingOverflow(Int64(max(0, delay)))
        let deadline = overflow ? Int64.max : sum
        let index = timers.firstIndex { $0.deadline > deadline } ?? timers.count
        timers.insert((deadline, nextTimer, job), at: index)
        return TimerID(raw: nextTimer)
    }

    public func cancel(_ timer: TimerID) { timers.removeAll { $0.id == timer.raw } }

    /// Runs posted jobs (and the jobs they post) until none is left.
    public func runUntilIdle() {
        while true {
            let jobs = mailbox.drain()
            if jobs.isEmpty { return }
            for job in jobs { job() }
        }
    }

    /// Moves the clock, firing due timers in deadline order, and runs what they post.
    public func advance(millis: Int64) {
        let target = clock.nowMillis() + millis
        runUntilIdle()
        while let first = timers.first, first.deadline <= target {
            timers.removeFirst()
            clock.advance(millis: first.deadline - clock.nowMillis())
            first.job()
            runUntilIdle()
        }
        clock.advance(millis: target - clock.nowMillis())
        runUntilIdle()
    }

    public var pendingTimers: Int { timers.count }
}
