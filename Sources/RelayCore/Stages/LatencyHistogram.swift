/// Durations in nanoseconds, counted in fixed log-linear buckets.
///
/// Below 16 ns every nanosecond has its own bucket; above, each power of two is cut into 16
/// equal buckets, so a bucket is at most 1/16 as wide as the values it holds and a percentile
/// read back (a bucket's midpoint, clamped to the exact minimum and maximum) is within ~3 % of
/// the true value. The buckets are allocated once; `record` only increments, so recording a
/// sample costs a few instructions and never allocates. Values from 2^41 ns (about 37 minutes)
/// on share the last bucket.
public struct LatencyHistogram: Sendable, Equatable {
    /// Buckets per power of two, as a power of two.
    static let subBucketBits = 4
    static let subBuckets = 1 << subBucketBits
    /// The largest power of two with buckets of its own.
    static let topExponent = 40
    public static let bucketCount = subBuckets + (topExponent - subBucketBits + 1) * subBuckets

    public private(set) var counts: [UInt64]
    public private(set) var count: UInt64 = 0
    public private(set) var sumNanos: UInt64 = 0
    public private(set) var minNanos: UInt64 = .max
    public private(set) var maxNanos: UInt64 = 0

    public init() { counts = [UInt64](repeating: 0, count: Self.bucketCount) }

    /// Counts one duration.
    @inline(__always)
    public mutating func record(_ nanos: UInt64) {
        counts[Self.bucketIndex(of: nanos)] &+= 1
        count &+= 1
        sumNanos &+= nanos
        if nanos < minNanos { minNanos = nanos }
        if nanos > maxNanos { maxNanos = nanos }
    }

    /// Adds every sample of `other` (the same buckets, so nothing is lost).
    public mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        for index in counts.indices { counts[index] &+= other.counts[index] }
        count &+= other.count
        sumNanos &+= other.sumNanos
        minNanos = min(minNanos, other.minNanos)
        maxNanos = max(maxNanos, other.maxNanos)
    }

    /// The duration at percentile `p` (0...100) in nanoseconds, nil without samples: the
    /// midpoint of the bucket holding the sample of rank ⌈p/100 · count⌉ (the open last bucket:
    /// its start), kept within the exact minimum and maximum, which the first and last ranks are.
    public func percentile(_ p: Double) -> UInt64? {
        guard count > 0 else { return nil }
        let rank = max(1, min(count, UInt64((p / 100 * Double(count)).rounded(.up))))
        if rank == 1 { return minNanos }
        if rank == count { return maxNanos }
        var seen: UInt64 = 0
        for (index, bucketCount) in counts.enumerated() where bucketCount > 0 {
            seen += bucketCount
            guard seen >= rank else { continue }
            let low = Self.lowerBound(ofBucket: index)
            let high = Self.upperBound(ofBucket: index)
            let middle = high == .max ? low : low + (high - low - 1) / 2
            return min(max(middle, minNanos), maxNanos)
        }
        return maxNanos
    }

    /// The bucket a duration falls in.
    @inline(__always)
    static func bucketIndex(of nanos: UInt64) -> Int {
        guard nanos >= UInt64(subBuckets) else { return Int(nanos) }
        let exponent = 63 - nanos.leadingZeroBitCount
        guard exponent <= topExponent else { return bucketCount - 1 }
        let shift = exponent - subBucketBits
        let sub = Int(nanos >> UInt64(shift)) - subBuckets
        return subBuckets + shift * subBuckets + sub
    }

    /// The smallest duration in bucket `index`.
    static func lowerBound(ofBucket index: Int) -> UInt64 {
        guard index >= subBuckets else { return UInt64(index) }
        let shift = (index - subBuckets) / subBuckets
        let sub = (index - subBuckets) % subBuckets
        return UInt64(subBuckets + sub) << UInt64(shift)
    }

    /// One past the largest duration in bucket `index` (the last bucket is open: `UInt64.max`).
    static func upperBound(ofBucket index: Int) -> UInt64 {
        guard index < bucketCount - 1 else { return .max }
        return lowerBound(ofBucket: index + 1)
    }
}
