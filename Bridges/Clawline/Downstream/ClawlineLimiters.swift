import RelayCore

/// The rate limits a device's sockets share: `pair_request` and `auth` per minute (surviving
/// reconnects), messages and typing per second, and oversized messages (two a minute).
struct ClawlineLimiters {
    private var pairRequests: RateLimiter
    private var authAttempts: RateLimiter
    private var messages: RateLimiter
    private var typing: RateLimiter
    private var oversized = RateLimiter(limit: 2, windowMillis: 60_000)

    init(_ settings: ClawlineSettings) {
        pairRequests = RateLimiter(limit: settings.pairRequestsPerMinute, windowMillis: 60_000)
        authAttempts = RateLimiter(limit: settings.authAttemptsPerMinute, windowMillis: 60_000)
        messages = RateLimiter(limit: settings.messagesPerSecond, windowMillis: 1_000)
        typing = RateLimiter(limit: settings.typingPerSecond, windowMillis: 1_000)
    }

    /// Counts an attempt; false when it is past the limit. `key` is the socket's device (or
    /// connection, before auth); pairing and auth count the device the frame names.
    mutating func allow(_ limit: ClawlineSocketMachine.RateLimit, key: String, now: Int64) -> Bool {
        switch limit {
        case .pairRequests(let deviceID): pairRequests.allow(deviceID, now: now)
        case .authAttempts(let deviceID): authAttempts.allow(deviceID, now: now)
        case .messages: messages.allow(key, now: now)
        case .typing: typing.allow(key, now: now)
        case .oversized: oversized.allow(key, now: now)
        }
    }

    /// Forgets history older than each window, so memory follows active devices only.
    mutating func prune(now: Int64) {
        pairRequests.prune(now: now)
        authAttempts.prune(now: now)
        messages.prune(now: now)
        typing.prune(now: now)
        oversized.prune(now: now)
    }
}
