import RelayCore
import RelayTesting
import Testing

/// Several nodes in memory over one journal: what one node stores reaches the user's sockets on
/// the others, in seq order, once, however the positions travel.
@Suite struct ClusterDeliveryTests {
    @Test func aMessageAndItsAnswerOnOneNodeReachASocketOnAnotherInOrder() {
        let fixture = ClusterFixture(nodes: 2)
        let phone = fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        #expect(fixture.send("hello", from: "phone", on: 0))
        fixture.emit(.progress("he"), on: 0)
        fixture.emit(.final("echo hello"), on: 0)
        #expect(phone.contents == ["hello", "echo hello"])
        #expect(laptop.contents == ["hello", "echo hello"], "the other node read both from the log")
        #expect(laptop.seqs == phone.seqs)
        #expect(laptop.streamed == ["he"], "progress crossed as a live event")
        #expect(laptop.typing == [true, false])
        #expect(fixture.nodes[1].hub.delivery?.reads == 2, "one read per position")
        #expect(fixture.nodes[0].hub.delivery?.reads == 0, "the writing node reads nothing")
    }

    @Test func aLostPositionIsHealedByTheResync() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        fixture.cluster.losePositions = true
        fixture.send("lost", from: "phone", on: 0)
        #expect(laptop.contents.isEmpty)
        fixture.resync()
        #expect(laptop.contents == ["lost"], "the head moved, the gap was read")
        fixture.resync()
        #expect(laptop.contents == ["lost"], "a second resync finds nothing new")
    }

    @Test func aRepeatedPositionDeliversNothingTwice() {
        let fixture = ClusterFixture(nodes: 3)
        fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        let tablet = fixture.connect("tablet", on: 2)
        fixture.cluster.repeatPositions = true
        for text in ["one", "two", "three"] { fixture.send(text, from: "phone", on: 0) }
        #expect(laptop.contents == ["one", "two", "three"])
        #expect(tablet.contents == ["one", "two", "three"])
    }

    @Test func aNodesOwnWriteWaitsForAnotherNodesEarlierWriteItHasNotHeardOf() {
        let fixture = ClusterFixture(nodes: 2)
        let phone = fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        fixture.cluster.holdPositions = true
        fixture.send("first", from: "phone", on: 0)
        fixture.send("second", from: "laptop", on: 1)
        #expect(laptop.contents == ["first", "second"], "node 1's own message came after node 0's, which it read first")
        #expect(laptop.seqs == laptop.seqs.sorted())
        #expect(phone.contents == ["first"], "node 0 has not heard yet")
        fixture.cluster.releaseHeld()
        fixture.loop.runUntilIdle()
        #expect(phone.contents == ["first", "second"])
        #expect(fixture.nodes[1].hub.delivery?.follower(of: fixture.user)?.isIdle == true)
    }

    @Test func positionsArrivingLateAndOutOfOrderStillDeliverInSeqOrder() {
        let fixture = ClusterFixture(nodes: 3)
        fixture.connect("phone", on: 0)
        fixture.connect("tablet", on: 2)
        let laptop = fixture.connect("laptop", on: 1)
        fixture.cluster.holdPositions = true
        fixture.send("a", from: "phone", on: 0)
        fixture.send("b", from: "tablet", on: 2)
        fixture.send("c", from: "phone", on: 0)
        fixture.cluster.releaseHeld()
        fixture.loop.runUntilIdle()
        #expect(laptop.contents == ["a", "b", "c"])
    }

    @Test func aFailureOnOneNodeReachesTheOthersAfterItsMessage() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        fixture.send("doomed", from: "phone", on: 0)
        fixture.emit(.failed("backend down"), on: 0)
        #expect(laptop.contents == ["doomed"])
        #expect(laptop.failures.map(\.reason) == ["backend down"])
        #expect(laptop.failures.first?.turn.clientID == "c_doomed")
    }

    @Test func aConversationChangedOnOneNodeReachesTheOthersObservers() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("laptop", on: 1)
        var heard: [ConversationChange] = []
        fixture.nodes[1].hub.changes.observe { heard.append($0) }
        var own: [ConversationChange] = []
        fixture.nodes[0].hub.changes.observe { own.append($0) }
        fixture.nodes[0].hub.conversations.edit(id: fixture.conversation.id, .retitle("Renamed")) { _ in }
        fixture.loop.runUntilIdle()
        #expect(own.count == 1, "the writing node hears its change once")
        guard case .conversation(let changed)? = heard.first else {
            Issue.record("node 1 heard \(heard)")
            return
        }
        #expect(changed.title == "Renamed")
        #expect(fixture.nodes[1].hub.conversations.cached(id: fixture.conversation.id)?.title == "Renamed", "the cache follows")
        #expect(heard.count == 1)
    }

    @Test func aStreamWithNoSocketOnANodeIsNotReadThere() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("phone", on: 0)
        fixture.send("one", from: "phone", on: 0)
        fixture.resync()
        #expect(fixture.nodes[1].hub.delivery?.reads == 0)
        let laptop = fixture.connect("laptop", on: 1)
        fixture.send("two", from: "phone", on: 0)
        #expect(laptop.contents == ["two"], "once a socket is there, what comes after is read")
    }

    @Test func aBackgroundedQueueDeviceOnAnotherNodeGetsTheEventQueuedThereAndDrainedOnce() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("phone", on: 0)
        let tablet = fixture.connect("tablet", on: 1, delivery: .queue(ttlMillis: 60_000, capacity: 100, scheme: nil))
        fixture.nodes[1].hub.presence.signal(.backgrounded, deviceID: "tablet")
        fixture.send("while away", from: "phone", on: 0)
        fixture.emit(.final("answer"), on: 0)
        #expect(tablet.events.isEmpty)
        #expect(fixture.journal.queue(of: "tablet").count == 2, "node 1 queued what node 0 stored, for the device whose presence it holds")
        fixture.nodes[1].hub.presence.signal(.foregrounded, deviceID: "tablet")
        fixture.loop.runUntilIdle()
        let drained: [String] = tablet.queued.map { if case .message(let event) = $0.item { event.content } else { "" } }
        #expect(drained == ["while away", "answer"])
        #expect(fixture.journal.queue(of: "tablet").isEmpty)
        fixture.send("back", from: "phone", on: 0)
        #expect(tablet.contents == ["back"], "in the foreground it takes events live again")
    }

    @Test func aReadCursorMovedOnOneNodeReachesTheOthersObserversOnce() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("phone", on: 0)
        fixture.connect("laptop", on: 1)
        fixture.send("hello", from: "phone", on: 0)
        fixture.emit(.final("answer"), on: 0)
        var reads: [[ReadCursor]] = [[], []]
        for node in 0..<2 {
            fixture.nodes[node].hub.changes.observe { change in if case .read(let cursor) = change { reads[node].append(cursor) } }
        }
        let answerSeq = fixture.journal.events.last?.seq ?? 0
        fixture.nodes[0].hub.read(userID: fixture.user, conversationID: fixture.conversation.id, seq: answerSeq)
        fixture.loop.runUntilIdle()
        #expect(reads[0].map(\.seq) == [answerSeq])
        #expect(reads[1].map(\.seq) == [answerSeq], "node 1's unread counts follow")
    }

    @Test func aConversationDeletedOnOneNodeIsForgottenOnTheOthers() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("laptop", on: 1)
        let id = fixture.conversation.id
        fixture.nodes[1].hub.conversations.load(id: id) { _ in }
        fixture.loop.runUntilIdle()
        #expect(fixture.nodes[1].hub.conversations.cached(id: id) != nil)
        var heard: [ConversationChange] = []
        fixture.nodes[1].hub.changes.observe { heard.append($0) }
        fixture.nodes[0].hub.conversations.delete(id: id) { _ in }
        fixture.loop.runUntilIdle()
        guard heard.count == 1, case .deleted(let deleted) = heard[0] else {
            Issue.record("node 1 heard \(heard)")
            return
        }
        #expect(deleted.id == id)
        #expect(fixture.nodes[1].hub.conversations.cached(id: id) == nil, "and forgot the conversation")
    }
}
