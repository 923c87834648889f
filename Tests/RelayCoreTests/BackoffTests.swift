import RelayCore
import Testing

@Suite struct BackoffTests {
    @Test func doublesToTheCapWithinTwentyPercentAndResets() {
        var backoff = Backoff(minMillis: 1_000, maxMillis: 8_000)
        #expect([0, 0, 0, 0, 0].map { _ in backoff.next { _ in 0 } } == [800, 1_600, 3_200, 6_400, 6_400])
        #expect(backoff.next { $0 } == 9_600, "the top of the spread is +20 %")
        backoff.reset()
        #expect(backoff.next { _ in 0 } == 800)
        backoff.saturate()
        #expect(backoff.stepMillis == 8_000)
        for _ in 0..<100 {
            var fresh = Backoff()
            #expect((800...1_200).contains(fresh.next(random: Backoff.systemRandom)))
        }
    }
}
