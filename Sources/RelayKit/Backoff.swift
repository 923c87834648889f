/// Reconnect delays for an upstream link: a step doubling from `minMillis` to `maxMillis`, each
/// delay spread ±20 % around it so links that dropped together do not come back together.
public struct Backoff: Sendable, Equatable {
    public let minMillis: Int
    public let maxMillis: Int
    /// The step the next delay is spread around.
    public private(set) var stepMillis: Int

    public init(minMillis: Int = 1_000, maxMillis: Int = 30_000) {
        self.minMillis = minMillis
        self.maxMillis = maxMillis
        stepMillis = minMillis
    }

    /// The delay before the next try, then doubles the step. `random` returns a number in
    /// `0...bound` (injected so tests are deterministic).
    public mutating func next(random: (Int) -> Int) -> Int {
        let delay = stepMillis - stepMillis / 5 + random(2 * stepMillis / 5)
        stepMillis = min(stepMillis * 2, maxMillis)
        return delay
    }

    /// The link worked: start again from the shortest step.
    public mutating func reset() { stepMillis = minMillis }

    /// A refusal that will not heal soon: wait the longest step from now on.
    public mutating func saturate() { stepMillis = maxMillis }

    /// `millis` as operators read it in link details: `1.5 s`.
    public static func seconds(_ millis: Int) -> String { "\(millis / 1000).\(millis % 1000 / 100) s" }

    /// Uniform jitter in `0...bound`.
    public static func systemRandom(_ bound: Int) -> Int { Int.random(in: 0...max(0, bound)) }
}
