/// Delays between tries: a step doubling from `minMillis` to `maxMillis`, each delay spread
/// ±`spreadPercent` around it so clients that failed together do not come back together.
/// Upstream links keep one and step it (`next`); a request retried a few times asks for the delay
/// after its n-th attempt (`delay(afterAttempt:random:)`).
public struct Backoff: Sendable, Equatable {
    public let minMillis: Int
    public let maxMillis: Int
    /// How far a delay may stray from its step, in percent either way.
    public let spreadPercent: Int
    /// The step the next delay is spread around.
    public private(set) var stepMillis: Int

    public init(minMillis: Int = 1_000, maxMillis: Int = 30_000, spreadPercent: Int = 20) {
        self.minMillis = minMillis
        self.maxMillis = max(minMillis, maxMillis)
        self.spreadPercent = min(max(spreadPercent, 0), 100)
        stepMillis = minMillis
    }

    /// The delay before the next try, then doubles the step. `random` returns a number in
    /// `0...bound` (injected so tests are deterministic).
    public mutating func next(random: (Int) -> Int) -> Int {
        let delay = spread(stepMillis, random: random)
        stepMillis = min(stepMillis * 2, maxMillis)
        return delay
    }

    /// The delay after attempt `attempt` (1 for the first) failed, as `next` would give it on a
    /// fresh backoff called `attempt` times; the backoff itself does not move.
    public func delay(afterAttempt attempt: Int, random: (Int) -> Int) -> Int {
        var step = minMillis
        for _ in 1..<max(attempt, 1) where step < maxMillis { step = min(step * 2, maxMillis) }
        return spread(step, random: random)
    }

    /// The link worked: start again from the shortest step.
    public mutating func reset() { stepMillis = minMillis }

    /// A refusal that will not heal soon: wait the longest step from now on.
    public mutating func saturate() { stepMillis = maxMillis }

    private func spread(_ step: Int, random: (Int) -> Int) -> Int {
        step - step * spreadPercent / 100 + random(2 * step * spreadPercent / 100)
    }

    /// `millis` as operators read it in link details: `1.5 s`.
    public static func seconds(_ millis: Int) -> String { "\(millis / 1000).\(millis % 1000 / 100) s" }

    /// Uniform jitter in `0...bound`.
    public static func systemRandom(_ bound: Int) -> Int { Int.random(in: 0...max(0, bound)) }
}
