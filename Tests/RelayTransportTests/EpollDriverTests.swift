import Foundation
import Logging
import Synchronization
import Testing

@testable import RelayTransport

@Suite struct EpollDriverTests {
    private let tick = EpollDriver.lwsTimerTickMicros

    @Test func withoutRelayTimersItWakesLwsEveryTick() {
        #expect(EpollDriver.delay(untilEarliest: nil, now: 5_000_000) == tick)
    }

    @Test func aNearDeadlineIsWaitedForExactly() {
        #expect(EpollDriver.delay(untilEarliest: 5_250_000, now: 5_000_000) == 250_000)
    }

    @Test func aFarDeadlineWaitsNoLongerThanTheTick() {
        #expect(EpollDriver.delay(untilEarliest: UInt64.max, now: 5_000_000) == tick)
        #expect(EpollDriver.delay(untilEarliest: 5_000_000 + tick + 1, now: 5_000_000) == tick)
    }

    @Test func aDueDeadlineFiresAtOnce() {
        #expect(EpollDriver.delay(untilEarliest: 5_000_000, now: 5_000_000) == 0)
        #expect(EpollDriver.delay(untilEarliest: 4_000_000, now: 5_000_000) == 0)
    }

    /// lws 4.1's libev glue cannot move its timer earlier; the relay's own timer on the epoll loop
    /// must: a 50 ms timer scheduled behind a 60 s one fires first, on either loop.
    @Test(arguments: EventLoopKind.allCases)
    func aTimerEarlierThanTheArmedOneFiresFirst(_ kind: EventLoopKind) async throws {
        let loop = ServiceLoop(logger: Logger(label: "test"), eventLoop: kind)
        _ = try await offPool { try loop.start() }
        let (fired, firing) = AsyncStream.makeStream(of: String.self)
        loop.execute {
            loop.schedule(afterMillis: 60_000) { firing.yield("late") }
            loop.schedule(afterMillis: 50) { firing.yield("early") }
        }
        let first = try await firstValue(of: fired, within: .seconds(10))
        #expect(first == "early")
        try await offPool { loop.stop(graceMillis: 0) }
    }

    /// Runs a blocking call (the loop's start and stop wait on semaphores) on a thread of its own.
    private func offPool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// The stream's first value, or a failure once `limit` passed without one.
    private func firstValue(of stream: AsyncStream<String>, within limit: Duration) async throws -> String? {
        try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { await stream.first { _ in true } }
            group.addTask {
                try await Task.sleep(for: limit)
                Issue.record("nothing fired within \(limit)")
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
