import Testing

@testable import RelayCore

@Suite struct LatencyHistogramTests {
    @Test func belowSixteenNanosecondsEveryValueHasItsOwnBucket() {
        for value in UInt64(0)..<16 {
            let index = LatencyHistogram.bucketIndex(of: value)
            #expect(index == Int(value))
            #expect(LatencyHistogram.lowerBound(ofBucket: index) == value)
            #expect(LatencyHistogram.upperBound(ofBucket: index) == value + 1)
        }
    }

    @Test func eachPowerOfTwoIsCutIntoSixteenBuckets() {
        #expect(LatencyHistogram.bucketIndex(of: 16) == 16)
        #expect(LatencyHistogram.bucketIndex(of: 31) == 31)
        #expect(LatencyHistogram.bucketIndex(of: 32) == 32)
        #expect(LatencyHistogram.bucketIndex(of: 33) == 32, "from 32 on a bucket is 2 ns wide")
        #expect(LatencyHistogram.bucketIndex(of: 34) == 33)
        #expect(LatencyHistogram.bucketIndex(of: 1 << 20) - LatencyHistogram.bucketIndex(of: 1 << 19) == 16)
        #expect(LatencyHistogram.lowerBound(ofBucket: LatencyHistogram.bucketIndex(of: 1_000_000)) == 983_040)
        #expect(LatencyHistogram.upperBound(ofBucket: LatencyHistogram.bucketIndex(of: 1_000_000)) == 1_015_808)
    }

    @Test func everyValueFallsInsideItsBucketAndBucketsAreAtMostASixteenthWide() {
        var values: [UInt64] = []
        for exponent in 0..<41 {
            let power = UInt64(1) << UInt64(exponent)
            values += [power - 1, power, power + 1, power + power / 3]
        }
        var previous = -1
        for value in values.sorted() {
            let index = LatencyHistogram.bucketIndex(of: value)
            let (low, high) = (LatencyHistogram.lowerBound(ofBucket: index), LatencyHistogram.upperBound(ofBucket: index))
            #expect(low <= value && value < high, "\(value) in [\(low), \(high))")
            #expect(high == .max || (high - low) * 16 <= max(16, low), "bucket of \(value) is \(high - low) wide")
            #expect(index >= previous, "buckets follow the values")
            previous = index
        }
    }

    @Test func valuesPastTheTopShareTheLastBucket() {
        let last = LatencyHistogram.bucketCount - 1
        #expect(LatencyHistogram.bucketIndex(of: 1 << 41) == last)
        #expect(LatencyHistogram.bucketIndex(of: .max) == last)
        #expect(LatencyHistogram.bucketIndex(of: (1 << 41) - 1) == last, "the last bucket of 2^40 ends at 2^41")
        var histogram = LatencyHistogram()
        histogram.record(.max)
        histogram.record(1 << 45)
        histogram.record(1 << 50)
        #expect(histogram.percentile(50) == 1 << 45, "the open bucket reads as its start, at least the minimum")
        #expect(histogram.percentile(100) == .max)
    }

    @Test func percentilesAreWithinThreePercentAndTheEndsAreExact() throws {
        var histogram = LatencyHistogram()
        for micros in UInt64(1)...1_000 { histogram.record(micros * 1_000) }
        #expect(histogram.count == 1_000)
        #expect(histogram.sumNanos == 500_500_000)
        for (p, exact) in [(50.0, 500_000.0), (90, 900_000), (99, 990_000), (99.9, 999_000)] {
            let read = Double(try #require(histogram.percentile(p)))
            #expect(abs(read - exact) / exact < 0.032, "p\(p): \(read) for \(exact)")
        }
        #expect(histogram.percentile(0) == 1_000)
        #expect(histogram.percentile(100) == 1_000_000)
    }

    @Test func oneSampleIsEveryPercentileAndNoSampleIsNone() {
        var histogram = LatencyHistogram()
        #expect(histogram.percentile(50) == nil)
        histogram.record(123_456)
        #expect([0.0, 50, 99, 100].map { histogram.percentile($0) } == [123_456, 123_456, 123_456, 123_456])
    }

    @Test func mergingEqualsRecordingEverythingInOne() {
        var (left, right, all) = (LatencyHistogram(), LatencyHistogram(), LatencyHistogram())
        for value in stride(from: UInt64(3), to: 5_000_000, by: 7_919) {
            if value % 2 == 0 { left.record(value) } else { right.record(value) }
            all.record(value)
        }
        var merged = left
        merged.merge(right)
        #expect(merged == all)
        #expect(merged.minNanos == 3 && merged.count == left.count + right.count)
        merged.merge(LatencyHistogram())
        #expect(merged == all, "merging an empty histogram changes nothing")
        var empty = LatencyHistogram()
        empty.merge(all)
        #expect(empty == all)
    }
}
