/// A handle to cancel a scheduled job.
public struct TimerID: Hashable, Sendable {
    public let raw: UInt64

    public init(raw: UInt64) { self.raw = raw }
}

/// A loop that can also run jobs later: the libwebsockets service loop in the relay, a manual
/// loop with a test clock in tests.
///
/// - Important: `schedule` and `cancel` are called on the loop thread only.
public protocol LoopScheduler: LoopExecutor {
    @discardableResult
    func schedule(afterMillis delay: Int, _ job: @escaping () -> Void) -> TimerID
    func cancel(_ timer: TimerID)
}
