import Foundation
import Synchronization

/// Wall-clock time in Unix milliseconds, injected so tests can move it.
public protocol Clock: Sendable {
    func nowMillis() -> Int64
}

public struct SystemClock: Clock {
    public init() {}
    public func nowMillis() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}

/// A clock that moves only when told to.
public final class TestClock: Clock {
    private let now: Mutex<Int64>

    public init(startMillis: Int64 = 1_700_000_000_000) { now = Mutex(startMillis) }

    public func nowMillis() -> Int64 { now.withLock { $0 } }

    public func advance(millis: Int64) { now.withLock { $0 += millis } }
}
