import Synchronization

/// Runs jobs on one thread: the libwebsockets service thread in the relay, or a test's own thread.
///
/// - Important: `execute` may be called from any thread; the job runs later, on the loop thread,
///   in submission order.
public protocol LoopExecutor: Sendable {
    func execute(_ job: @escaping @Sendable () -> Void)
    /// True when the caller runs on the loop thread.
    var isOnLoop: Bool { get }
}

/// A non-Sendable value that may cross threads only to be used back on its loop.
///
/// `@unchecked Sendable` holds because `value` is read only on the loop thread (checked in debug builds).
public struct LoopBound<Value>: @unchecked Sendable {
    private let stored: Value
    /// The loop the value belongs to.
    public let loop: any LoopExecutor

    public init(_ value: Value, loop: any LoopExecutor) {
        self.stored = value
        self.loop = loop
    }

    public var value: Value {
        assert(loop.isOnLoop, "LoopBound value read off its loop")
        return stored
    }
}

extension LoopExecutor {
    /// Runs `body` on the loop with a value that is only safe there.
    public func execute<Value>(with value: Value, _ body: @escaping (Value) -> Void) {
        let bound = LoopBound((value, body), loop: self)
        execute {
            let (v, b) = bound.value
            b(v)
        }
    }
}

/// A FIFO of jobs shared between threads.
public final class Mailbox: Sendable {
    public init() {}
    private let jobs = Mutex<[@Sendable () -> Void]>([])

    /// Returns true when the mailbox was empty before (the loop needs a wake-up).
    @discardableResult
    public func post(_ job: @escaping @Sendable () -> Void) -> Bool {
        jobs.withLock { jobs in
            jobs.append(job)
            return jobs.count == 1
        }
    }

    public func drain() -> [@Sendable () -> Void] {
        jobs.withLock { jobs in
            let taken = jobs
            jobs.removeAll(keepingCapacity: true)
            return taken
        }
    }
}
