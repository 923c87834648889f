import RelayCore
import Testing

@Suite struct RateLimiterTests {
    func hit(_ limiter: inout RateLimiter, _ key: String, _ now: Int64) -> Bool { limiter.allow(key, now: now) }

    @Test func allowsUpToTheLimitInsideTheWindow() {
        var limiter = RateLimiter(limit: 5, windowMillis: 1_000)
        let results = (0..<6).map { limiter.allow("d", now: 1_000 + Int64($0)) }
        #expect(results == [true, true, true, true, true, false])
    }

    @Test func slidesWithMillisecondPrecision() {
        var limiter = RateLimiter(limit: 2, windowMillis: 1_000)
        #expect(hit(&limiter, "d", 0))
        #expect(hit(&limiter, "d", 500))
        #expect(!hit(&limiter, "d", 999))
        #expect(hit(&limiter, "d", 1_000))
        #expect(!hit(&limiter, "d", 1_499))
        #expect(hit(&limiter, "d", 1_500))
    }

    @Test func keysAreIndependentAndRefusalsAreNotCounted() {
        var limiter = RateLimiter(limit: 1, windowMillis: 60_000)
        #expect(hit(&limiter, "a", 0))
        #expect(hit(&limiter, "b", 0))
        #expect(!hit(&limiter, "a", 10))
        #expect(!hit(&limiter, "a", 59_999))
        #expect(hit(&limiter, "a", 60_000))
    }
}

@Suite struct IdentifierTests {
    @Test func recognisesUUIDv4() {
        #expect(Identifiers.isUUIDv4(Identifiers.newUUID()))
        #expect(Identifiers.isUUIDv4("0F0E8A3C-6A6B-4C1D-9E2F-1A2B3C4D5E6F"))
        #expect(!Identifiers.isUUIDv4("0f0e8a3c-6a6b-1c1d-9e2f-1a2b3c4d5e6f"))
        #expect(!Identifiers.isUUIDv4("0f0e8a3c-6a6b-4c1d-7e2f-1a2b3c4d5e6f"))
        #expect(!Identifiers.isUUIDv4("ABC123"))
        #expect(!Identifiers.isUUIDv4(""))
        #expect(Identifiers.newEventID().hasPrefix("s_"))
    }
}
