import RelayCore
import RelayTesting
import Testing

/// One turn per conversation runs in the whole cluster, in acceptance order; a dead node's turns
/// fail once and what waited behind them runs on a survivor; a dead node's late answer is refused.
@Suite struct ClusterTurnsTests {
    @Test func aTurnAcceptedOnAnotherNodeWaitsForTheRunningOneThenRunsThere() {
        let fixture = ClusterFixture(nodes: 2)
        let phone = fixture.connect("phone", on: 0)
        fixture.connect("laptop", on: 1)
        #expect(fixture.send("first", from: "phone", on: 0))
        #expect(fixture.send("second", from: "laptop", on: 1))
        #expect(fixture.runs(on: 0) == ["first"])
        #expect(fixture.runs(on: 1).isEmpty, "node 1 waits: node 0 runs the conversation's turn")
        #expect(fixture.nodes[1].hub.turns.queuedCount == 1)
        fixture.emit(.final("answer one"), on: 0)
        #expect(fixture.runs(on: 1) == ["second"], "the position of node 0's answer woke node 1's claim")
        fixture.emit(.final("answer two"), on: 1)
        #expect(phone.contents == ["first", "second", "answer one", "answer two"])
    }

    @Test func turnsAcceptedOnTwoNodesRunOneAtATimeInAcceptanceOrder() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        let sent = (0..<6).map { index in (text: "m\(index)", node: index % 2) }
        for message in sent { #expect(fixture.send(message.text, from: message.node == 0 ? "phone" : "laptop", on: message.node)) }
        var order: [String] = []
        for _ in sent {
            let running = (0..<2).filter { node in fixture.nodes[node].hub.turns.activeCount == 1 }
            #expect(running.count == 1, "never two runners at once")
            guard let node = running.first, let text = fixture.nodes[node].backend.runs.last?.request.text else { break }
            order.append(text)
            fixture.emit(.final("re \(text)"), on: node)
        }
        #expect(order == sent.map(\.text))
        #expect(laptop.contents.filter { $0.hasPrefix("re ") } == sent.map { "re \($0.text)" })
    }

    @Test func aDeadNodesRunningTurnFailsOnceAndTheNextRunsOnASurvivor() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        fixture.send("cut off", from: "phone", on: 0)
        fixture.send("next", from: "laptop", on: 1)
        fixture.drop(0)
        var failed: Int?
        fixture.nodes[1].hub.declareDead(fixture.nodes[0].identity) { failed = try? $0.get().failed }
        fixture.loop.runUntilIdle()
        #expect(failed == 1)
        #expect(laptop.failures.map(\.turn.clientID) == ["c_cut off"])
        #expect(laptop.failures.first?.reason.contains("node-0") == true)
        #expect(fixture.runs(on: 1) == ["next"], "the turn that waited runs on the survivor")
        fixture.nodes[1].hub.declareDead(fixture.nodes[0].identity) { failed = try? $0.get().failed }
        fixture.loop.runUntilIdle()
        #expect(failed == 0, "declaring it dead again fails nothing twice")
        #expect(laptop.failures.count == 1)
    }

    @Test func aDeadNodesLateAnswerIsRefusedAndReachesNoDevice() {
        let fixture = ClusterFixture(nodes: 2)
        let phone = fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        fixture.send("frozen", from: "phone", on: 0)
        fixture.drop(0)
        fixture.nodes[1].hub.declareDead(fixture.nodes[0].identity)
        fixture.loop.runUntilIdle()
        // Node 0 wakes up and its backend answers: the answer is fenced.
        fixture.emit(.final("too late"), on: 0)
        #expect(!fixture.journal.events.contains { $0.content == "too late" }, "nothing stored")
        #expect(!laptop.contents.contains("too late"))
        #expect(!phone.contents.contains("too late"))
        #expect(phone.failures.isEmpty, "the fenced node does not announce a second failure")
        #expect(laptop.failures.count == 1)
        #expect(fixture.nodes[0].hub.turns.activeCount == 0, "the fenced node let go of the turn")
    }

    @Test func aRelayCommandOnAnotherNodeTakesItsTurnInTheConversationsQueue() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        fixture.send("long job", from: "phone", on: 0)
        fixture.send("/model", from: "laptop", on: 1)
        #expect(laptop.contents == ["long job", "/model"], "the command waits for node 0's turn")
        fixture.emit(.final("done"), on: 0)
        #expect(laptop.contents.count == 4)
        #expect(laptop.contents.dropLast().last == "done")
        #expect(laptop.contents.last?.contains("answered by scripted") == true, "then node 1 answered it")
    }

    @Test func stopOnOneNodeStopsTheTurnRunningOnAnother() {
        let fixture = ClusterFixture(nodes: 2)
        let phone = fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        fixture.send("long job", from: "phone", on: 0)
        fixture.send("/stop", from: "laptop", on: 1)
        #expect(fixture.nodes[0].backend.runs.first?.isCancelled == true, "node 0 heard the request and stopped its turn")
        #expect(laptop.failures.map(\.cause) == [.aborted])
        #expect(phone.failures.map(\.turn.clientID) == ["c_long job"])
        #expect(fixture.nodes[0].hub.turns.activeCount == 0)
    }

    @Test func aWaitingTurnWhoseDeviceWentAwayDoesNotHoldUpTheConversation() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        fixture.connect("tablet", on: 1)
        fixture.send("first", from: "phone", on: 0)
        fixture.send("dropped", from: "laptop", on: 1)
        fixture.send("third", from: "tablet", on: 1)
        fixture.nodes[1].hub.turns.abandon(deviceID: "laptop")
        fixture.loop.runUntilIdle()
        fixture.emit(.final("one"), on: 0)
        #expect(fixture.runs(on: 1) == ["third"], "the dropped turn was given back, so the next one runs")
        #expect(laptop.failures.isEmpty, "a dropped turn is not a failure: a retry of its message runs it")
    }

    @Test func aRetriedMessageWhoseTurnWasGivenBackRunsAgain() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("phone", on: 0)
        fixture.connect("laptop", on: 1)
        fixture.send("first", from: "phone", on: 0)
        fixture.send("again", from: "laptop", on: 1)
        fixture.nodes[1].hub.turns.abandon(deviceID: "laptop")
        fixture.loop.runUntilIdle()
        fixture.emit(.final("one"), on: 0)
        fixture.connect("laptop", on: 1)
        fixture.send("again", from: "laptop", on: 1)
        #expect(fixture.runs(on: 1) == ["again"])
    }

    @Test func aWaitOnOneNodeForARunOnAnotherEndsWithItsAnswerOrFailure() {
        let fixture = ClusterFixture(nodes: 2)
        fixture.connect("phone", on: 0)
        fixture.connect("laptop", on: 1)
        fixture.send("answered", from: "phone", on: 0)
        let answeredRun = fixture.nodes[0].backend.runs[0].request.runID
        var ends: [String] = []
        fixture.nodes[1].hub.turns.whenEnded(runID: answeredRun) { end in
            if case .answered(let event) = end { ends.append(event.content) }
        }
        fixture.emit(.final("the answer"), on: 0)
        fixture.send("failing", from: "phone", on: 0)
        let failingRun = fixture.nodes[0].backend.runs[1].request.runID
        fixture.nodes[1].hub.turns.whenEnded(runID: failingRun) { end in
            if case .failed(let failure) = end { ends.append(failure.reason) }
        }
        fixture.emit(.failed("no luck"), on: 0)
        #expect(ends == ["the answer", "no luck"])
        #expect(fixture.nodes[1].hub.turns.watchCount == 0)
    }

    @Test func aDeadNodesWaitingTurnsRunOnTheSurvivorInAcceptanceOrder() {
        let fixture = ClusterFixture(nodes: 2)
        let phone = fixture.connect("phone", on: 0)
        let laptop = fixture.connect("laptop", on: 1)
        fixture.send("running", from: "phone", on: 0)
        fixture.send("queued on 0", from: "phone", on: 0)
        fixture.send("queued on 1", from: "laptop", on: 1)
        fixture.drop(0)
        var outcome: (failed: Int, adopted: Int)?
        fixture.nodes[1].hub.declareDead(fixture.nodes[0].identity) { outcome = try? $0.get() }
        fixture.loop.runUntilIdle()
        #expect(outcome?.failed == 1 && outcome?.adopted == 1)
        #expect(fixture.runs(on: 1) == ["queued on 0"], "the dead node's queued turn runs first: it was accepted first")
        fixture.emit(.final("zero"), on: 1)
        #expect(fixture.runs(on: 1) == ["queued on 0", "queued on 1"])
        fixture.emit(.final("one"), on: 1)
        #expect(laptop.contents == ["running", "queued on 0", "queued on 1", "zero", "one"])
        #expect(laptop.failures.map(\.turn.clientID) == ["c_running"])
        #expect(phone.contents == ["running", "queued on 0", "queued on 1"], "the dead node's socket heard nothing after it died")
        #expect(fixture.journal.records.values.allSatisfy { $0.state != .active }, "every message has its answer or failure")
    }
}
