import RelayCore
import Testing

@Suite struct StreamFollowerTests {
    typealias Follower = StreamFollower<String>

    /// What the actions deliver, in order, and the reads they ask for.
    static func split(_ actions: [Follower.Action]) -> (delivered: [String], reads: [ClosedRange<Int64>]) {
        var delivered: [String] = []
        var reads: [ClosedRange<Int64>] = []
        for action in actions {
            switch action {
            case .deliver(let payloads): delivered += payloads
            case .read(let after, let through): reads.append((after + 1)...through)
            }
        }
        return (delivered, reads)
    }

    static func position(_ prev: Int64, _ last: Int64) -> StreamPosition { StreamPosition(stream: "u", prev: prev, last: last) }

    @Test func thisNodesOwnContiguousWritesAreHandedOutAtOnceWithoutReads() {
        var follower = Follower()
        #expect(
            Self.split(follower.local(first: 1, last: 2, payloads: ["m1"])).delivered == ["m1"],
            "an accepted message takes its seq and its answer's slot"
        )
        #expect(Self.split(follower.local(first: 3, last: 3, payloads: ["a1"])).delivered == ["a1"])
        #expect(follower.delivered == 3)
        #expect(follower.isIdle)
    }

    @Test func anotherNodesPositionIsReadFromTheLogThenHandedOut() {
        var follower = Follower()
        _ = follower.local(first: 1, last: 2, payloads: ["m1"])
        let heard = Self.split(follower.heard(Self.position(2, 4), listened: true))
        #expect(heard.reads == [3...4] && heard.delivered.isEmpty)
        let done = Self.split(follower.readDone([(3, "m2")], complete: true))
        #expect(done.delivered == ["m2"], "seq 4 is an answer's slot: a gap, not a loss")
        #expect(follower.delivered == 4)
        #expect(Self.split(follower.heard(Self.position(2, 4), listened: true)).reads.isEmpty, "a repeated position reads nothing")
    }

    @Test func aLocalWriteAfterAnUnheardGapWaitsForTheGapAndComesAfterIt() {
        var follower = Follower()
        _ = follower.local(first: 1, last: 2, payloads: ["m1"])
        // Another node wrote 3...4 and its position has not arrived; this node then writes 5.
        let local = Self.split(follower.local(first: 5, last: 5, payloads: ["mine"]))
        #expect(local.delivered.isEmpty, "held: seqs 3 and 4 may hold events")
        #expect(local.reads == [3...4])
        let done = Self.split(follower.readDone([(3, "theirs")], complete: true))
        #expect(done.delivered == ["theirs", "mine"])
        #expect(follower.delivered == 5 && follower.isIdle)
    }

    @Test func aReadThatCoversAHeldWriteHandsItOutOnceFromTheLog() {
        var follower = Follower()
        _ = follower.local(first: 1, last: 1, payloads: ["m1"])
        #expect(Self.split(follower.heard(Self.position(3, 6), listened: true)).reads == [2...6], "everything after what was delivered is read")
        #expect(Self.split(follower.local(first: 5, last: 5, payloads: ["mine"])).reads.isEmpty, "a read is in flight already")
        let done = Self.split(follower.readDone([(2, "a"), (5, "mine (log)"), (6, "b")], complete: true))
        #expect(done.delivered == ["a", "mine (log)", "b"])
        #expect(follower.isIdle)
    }

    @Test func aPageCutShortReadsOnFromItsNewestEntry() {
        var follower = Follower()
        _ = follower.local(first: 1, last: 1, payloads: ["m1"])
        _ = follower.heard(Self.position(1, 10), listened: true)
        let first = Self.split(follower.readDone([(2, "a"), (3, "b")], complete: false))
        #expect(first.delivered == ["a", "b"])
        #expect(first.reads == [4...10])
        #expect(Self.split(follower.readDone([(9, "c")], complete: true)).delivered == ["c"])
        #expect(follower.delivered == 10)
    }

    @Test func withoutSocketsHereAPositionOnlyMovesTheFloor() {
        var follower = Follower()
        #expect(Self.split(follower.heard(Self.position(0, 3), listened: false)).reads.isEmpty)
        #expect(follower.delivered == 3)
        #expect(Self.split(follower.heard(Self.position(3, 5), listened: false)).reads.isEmpty)
        #expect(follower.delivered == 5)
        let listened = Self.split(follower.heard(Self.position(5, 6), listened: true))
        #expect(listened.reads == [6...6], "once a socket is here, what moves is read")
    }

    @Test func aFailedReadIsAskedAgainByTheNextPosition() {
        var follower = Follower()
        _ = follower.local(first: 1, last: 1, payloads: ["m1"])
        _ = follower.heard(Self.position(1, 2), listened: true)
        follower.readFailed()
        #expect(follower.delivered == 1)
        #expect(Self.split(follower.heard(Self.position(1, 2), listened: true)).reads == [2...2], "the repeat (or the resync) reads it")
        #expect(Self.split(follower.readDone([(2, "m2")], complete: true)).delivered == ["m2"])
    }

    @Test func aLocalWriteTheLogAlreadyDeliveredIsDropped() {
        var follower = Follower()
        _ = follower.local(first: 1, last: 1, payloads: ["m1"])
        _ = follower.heard(Self.position(1, 3), listened: true)
        _ = follower.readDone([(2, "m2"), (3, "m3")], complete: true)
        #expect(Self.split(follower.local(first: 3, last: 3, payloads: ["m3 again"])).delivered.isEmpty)
    }

    @Test func positionsKeepTheirFormThroughAPayloadAndSplitUnderTheLimit() {
        let positions = (0..<400).map { StreamPosition(stream: "user:\($0)", prev: Int64($0), last: Int64($0) + 2) }
        let payloads = StreamPosition.payloads(positions, maxBytes: 1_000)
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count <= 1_000 })
        #expect(payloads.flatMap { StreamPosition.parse(payload: $0) } == positions, "a stream id may hold colons")
        #expect(StreamPosition.parse(payload: "u:5:3;:1:2;u:x:2;u:-1:2;ok:1:2") == [StreamPosition(stream: "ok", prev: 1, last: 2)])
    }
}
