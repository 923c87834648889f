import RelayCore
import Testing

@Suite struct ReconnectBackoffTests {
    @Test func jitterStaysWithinTwentyPercent() {
        var low = ReconnectBackoff { _ in 0 }
        var high = ReconnectBackoff { $0 }
        #expect(low.nextDelay() == 800 && high.nextDelay() == 1_200)
        low.backOffFully()
        #expect(low.nextDelay() == 24_000)
        low.reset()
        #expect(low.currentMillis == 1_000)
        #expect(ReconnectBackoff.seconds(1_550) == "1.5 s")
    }
}
