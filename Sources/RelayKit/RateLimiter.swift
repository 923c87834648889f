/// A sliding-window limit per key: at most `limit` hits in the last `windowMillis`.
///
/// Every hit's time is kept and trimmed on the next check (no fixed buckets), as the Clawline
/// test list requires. Not thread-safe: one owner.
public struct RateLimiter {
    public let limit: Int
    public let windowMillis: Int64
    private var hits: [String: [Int64]] = [:]

    public init(limit: Int, windowMillis: Int64) {
        self.limit = limit
        self.windowMillis = windowMillis
    }

    /// Records a hit for `key` at `now` and tells whether it is within the limit.
    /// A refused hit is not recorded.
    public mutating func allow(_ key: String, now: Int64) -> Bool {
        var times = hits[key, default: []]
        let cutoff = now - windowMillis
        if let firstKept = times.firstIndex(where: { $0 > cutoff }) {
            times.removeFirst(firstKept)
        } else {
            times.removeAll()
        }
        guard times.count < limit else {
            hits[key] = times
            return false
        }
        times.append(now)
        hits[key] = times
        return true
    }

    /// Drops keys with no hit inside the window, so memory follows active keys only.
    public mutating func prune(now: Int64) {
        let cutoff = now - windowMillis
        hits = hits.filter { ($0.value.last ?? .min) > cutoff }
    }
}
