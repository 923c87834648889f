import RelayKit
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

    @Test func theDelayAfterAnAttemptIsTheStepThatManyTriesIn() {
        let backoff = Backoff(minMillis: 1_000, maxMillis: 8_000)
        #expect((0...6).map { backoff.delay(afterAttempt: $0) { _ in 0 } } == [800, 800, 1_600, 3_200, 6_400, 6_400, 6_400])
        #expect(backoff.delay(afterAttempt: 2) { $0 } == 2_400)
        #expect(backoff.stepMillis == 1_000, "asking does not move the backoff")
        var stepped = backoff
        #expect((1...4).map { _ in stepped.next { _ in 0 } } == (1...4).map { backoff.delay(afterAttempt: $0) { _ in 0 } })
    }

    @Test func aWiderSpreadForRetriesThatMayWaitLonger() {
        let backoff = Backoff(minMillis: 100, maxMillis: 100 << 10, spreadPercent: 50)
        #expect(backoff.delay(afterAttempt: 1) { _ in 0 } == 50)
        #expect(backoff.delay(afterAttempt: 1) { $0 } == 150)
        #expect(backoff.delay(afterAttempt: 3) { $0 / 2 } == 400)
        for _ in 0..<100 {
            #expect((100...300).contains(backoff.delay(afterAttempt: 2, random: Backoff.systemRandom)))
        }
    }

    @Test func detailsReadSecondsToATenth() {
        #expect(Backoff.seconds(800) == "0.8 s" && Backoff.seconds(24_000) == "24.0 s" && Backoff.seconds(1_650) == "1.6 s")
    }
}
