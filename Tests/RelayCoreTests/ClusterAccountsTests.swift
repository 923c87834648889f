import RelayCore
import RelayTesting
import Testing

/// An upstream account is held by one node of a cluster: its turns run there, whichever node
/// accepted them, in acceptance order; while nobody holds it they wait; when its holder dies
/// they run on the node that takes it over.
@Suite struct ClusterAccountsTests {
    /// Every node hears that `holder` holds the scripted backend's account (nil: nobody), and the
    /// holder's link reports connected.
    private func lease(_ fixture: ClusterFixture, to holder: Int?) {
        let lease = AccountLease(account: "scripted", holder: holder.map { fixture.nodes[$0].identity })
        for node in fixture.nodes { node.hub.accountLeases([lease]) }
        if let holder { fixture.nodes[holder].hub.accounts.report("scripted", kind: "test", .connected, "") }
        fixture.loop.runUntilIdle()
    }

    @Test func aTurnAcceptedOnANodeWithoutTheAccountRunsOnItsHolder() {
        let fixture = ClusterFixture(nodes: 2)
        lease(fixture, to: 1)
        let phone = fixture.connect("phone", on: 0)
        #expect(fixture.send("hello", from: "phone", on: 0))
        #expect(fixture.runs(on: 0).isEmpty, "node 0 does not hold the account")
        #expect(fixture.runs(on: 1) == ["hello"], "the holder runs it")
        fixture.emit(.final("hi there"), on: 1)
        #expect(phone.contents == ["hello", "hi there"])
        #expect(fixture.nodes[0].hub.turns.activeCount == 0)
    }

    @Test func handedTurnsRunOneAtATimeInAcceptanceOrder() {
        let fixture = ClusterFixture(nodes: 2)
        lease(fixture, to: 1)
        let phone = fixture.connect("phone", on: 0)
        fixture.connect("laptop", on: 1)
        #expect(fixture.send("one", from: "phone", on: 0))
        #expect(fixture.send("two", from: "laptop", on: 1))
        #expect(fixture.send("three", from: "phone", on: 0))
        for (index, text) in ["one", "two", "three"].enumerated() {
            #expect(fixture.runs(on: 1).count == index + 1, "one run at a time")
            #expect(fixture.runs(on: 1).last == text)
            fixture.emit(.final("re \(text)"), on: 1)
        }
        #expect(fixture.runs(on: 0).isEmpty)
        #expect(phone.contents.filter { $0.hasPrefix("re ") } == ["re one", "re two", "re three"])
    }

    @Test func aLostHintIsHealedByTheNextLeaseAnswer() {
        let fixture = ClusterFixture(nodes: 2)
        lease(fixture, to: 1)
        fixture.connect("phone", on: 0)
        fixture.cluster.loseRequests = true
        #expect(fixture.send("hello", from: "phone", on: 0))
        #expect(fixture.runs(on: 1).isEmpty, "the holder did not hear of it")
        lease(fixture, to: 1)  // the next heartbeat's answer, unchanged
        #expect(fixture.runs(on: 1) == ["hello"])
    }

    @Test func turnsWaitWhileNobodyHoldsTheAccountThenRunOnTheNewHolder() {
        let fixture = ClusterFixture(nodes: 2)
        lease(fixture, to: nil)
        let phone = fixture.connect("phone", on: 0)
        #expect(fixture.send("hello", from: "phone", on: 0))
        #expect(fixture.runs(on: 0).isEmpty && fixture.runs(on: 1).isEmpty, "nobody holds the account: it waits")
        #expect(phone.failures.isEmpty)
        lease(fixture, to: 1)
        #expect(fixture.runs(on: 1) == ["hello"])
        #expect(fixture.runs(on: 0).isEmpty)
    }

    @Test func whenTheHolderDiesItsHandedTurnsRunOnTheNodeThatTakesTheAccount() {
        let fixture = ClusterFixture(nodes: 3)
        lease(fixture, to: 1)
        let phone = fixture.connect("phone", on: 0)
        #expect(fixture.send("running", from: "phone", on: 0))
        #expect(fixture.send("waiting", from: "phone", on: 0))
        #expect(fixture.runs(on: 1) == ["running"])
        fixture.drop(1)
        fixture.nodes[2].hub.declareDead(fixture.nodes[1].identity)
        fixture.loop.runUntilIdle()
        #expect(phone.failures.map(\.turn.clientID) == ["c_running"], "its running turn failed once")
        #expect(fixture.runs(on: 2).isEmpty, "the survivor waits: the account has no holder yet")
        let lease = AccountLease(account: "scripted", holder: fixture.nodes[2].identity)
        for index in [0, 2] { fixture.nodes[index].hub.accountLeases([lease]) }
        fixture.loop.runUntilIdle()
        #expect(fixture.runs(on: 2).isEmpty, "the new holder waits for its link to report")
        fixture.nodes[2].hub.accounts.report("scripted", kind: "test", .connecting, "")
        fixture.loop.runUntilIdle()
        #expect(fixture.runs(on: 2).isEmpty, "connecting is no report")
        fixture.nodes[2].hub.accounts.report("scripted", kind: "test", .connected, "")
        fixture.loop.runUntilIdle()
        #expect(fixture.runs(on: 2) == ["waiting"], "the new holder runs the turn that waited behind the dead one's")
        fixture.emit(.final("answered"), on: 2)
        #expect(phone.contents.last == "answered")
        #expect(fixture.runs(on: 0).isEmpty)
    }

    @Test func aNodeShowsTheLinkStateTheHolderReported() {
        let fixture = ClusterFixture(nodes: 2)
        let accounts = fixture.nodes[0].hub.accounts
        accounts.register("scripted", kind: "test")
        #expect(accounts.state(of: "scripted") == .connecting)
        fixture.nodes[0].hub.accountLeases([AccountLease(account: "scripted", holder: fixture.nodes[1].identity, state: .retrying)])
        #expect(accounts.state(of: "scripted") == .retrying, "the holder's state, not this node's unopened link")
        fixture.nodes[0].hub.accountLeases([AccountLease(account: "scripted", holder: fixture.nodes[0].identity, state: .connected)])
        #expect(accounts.state(of: "scripted") == .retrying, "an account held here shows what its own link reports")
    }

    @Test func aBuiltInBackendRunsWhereverItWasAccepted() {
        let fixture = ClusterFixture(nodes: 2)
        let lease = AccountLease(account: "some-gateway", holder: fixture.nodes[1].identity)
        for node in fixture.nodes { node.hub.accountLeases([lease]) }
        fixture.connect("phone", on: 0)
        #expect(fixture.send("hello", from: "phone", on: 0))
        #expect(fixture.runs(on: 0) == ["hello"], "the scripted backend is not a leased account")
    }
}
