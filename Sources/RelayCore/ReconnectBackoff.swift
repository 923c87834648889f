/// How long an upstream link waits before its next connection attempt: the current backoff
/// ±20 %, doubling from `minMillis` up to `maxMillis`, back to the start once a connection works.
///
/// Shared by the upstream links so they heal the same way (and a fleet of relays does not
/// reconnect in lockstep after a server restart).
public struct ReconnectBackoff {
    public static let defaultMinMillis = 1_000
    public static let defaultMaxMillis = 30_000

    public let minMillis: Int
    public let maxMillis: Int
    /// The backoff the next `nextDelay` starts from.
    public private(set) var currentMillis: Int
    /// Returns a number in `0...bound`; injected so tests are deterministic.
    private let random: (Int) -> Int

    public init(
        minMillis: Int = defaultMinMillis, maxMillis: Int = defaultMaxMillis, random: @escaping (Int) -> Int = { Int.random(in: 0...max(0, $0)) }
    ) {
        self.minMillis = max(1, minMillis)
        self.maxMillis = max(self.minMillis, maxMillis)
        self.random = random
        currentMillis = self.minMillis
    }

    /// The delay before the next attempt (80 % to 120 % of the current backoff); the backoff then doubles.
    public mutating func nextDelay() -> Int {
        let delay = currentMillis - currentMillis / 5 + random(2 * currentMillis / 5)
        currentMillis = min(currentMillis * 2, maxMillis)
        return delay
    }

    /// A connection worked: the next failure waits the minimum again.
    public mutating func reset() { currentMillis = minMillis }

    /// The server refused us: waiting longer is all that can help, so no quick retries.
    public mutating func backOffFully() { currentMillis = maxMillis }

    /// `millis` as operators read it: `1.5 s`.
    public static func seconds(_ millis: Int) -> String {
        "\(millis / 1000).\(millis % 1000 / 100) s"
    }
}
