import RelayCore
import RelayTesting
import Testing

/// Pushes in a cluster: every node stores the pushes its answers make, the first whose timer
/// fires sends the device's whole burst, a dead node's pushes are taken by a survivor, and a
/// target registered through one node is known to the others.
@Suite struct ClusterPushTests {
    let fixture = ClusterFixture(nodes: 2)
    let sinks = RecordingDispatcher()
    let target = PushTarget(deviceID: "phone", kind: .apns, token: String(repeating: "ab", count: 32), registeredAt: 0)

    init() {
        fixture.journal.pushDevices = [PushDevice(deviceID: "phone", userID: fixture.user, protocolName: "test", targets: [target])]
    }

    /// Pushes on every node, through one set of sinks.
    func enable(delay: Int64 = 0) {
        for node in fixture.nodes { node.hub.pushes.enable(dispatcher: sinks, settings: Pushes.Settings(delayMillis: delay)) }
        fixture.loop.runUntilIdle()
    }

    /// A turn from the laptop (no socket: nobody reads live) through `node`, answered there.
    func turn(_ text: String, on node: Int = 0) {
        #expect(fixture.send(text, from: "laptop", on: node))
        fixture.emit(.final("echo \(text)"), on: node)
        fixture.loop.advance(millis: 0)
    }

    @Test func aPhoneInTheForegroundOnAnotherNodeGetsNoPushAndOneOnceInTheBackground() {
        enable()
        fixture.connect("laptop", on: 0)
        fixture.connect("phone", on: 1)
        turn("hi")
        #expect(sinks.deliveries.isEmpty, "node 1 says the phone is in the foreground")
        #expect(fixture.journal.pendingPushes.isEmpty, "the dropped push left the journal")
        fixture.nodes[1].hub.presence.signal(.backgrounded, deviceID: "phone")
        fixture.loop.runUntilIdle()
        turn("again")
        #expect(sinks.deliveries.map(\.content.body) == ["echo again"])
    }

    @Test func aDeadNodesForegroundCountsForNothing() {
        enable()
        fixture.connect("laptop", on: 0)
        fixture.connect("phone", on: 1)
        fixture.drop(1)
        fixture.nodes[0].hub.declareDead(fixture.nodes[1].identity)
        fixture.loop.runUntilIdle()
        turn("hi")
        #expect(sinks.deliveries.count == 1, "the phone's only foreground was on a dead node")
    }

    @Test func aBurstAnsweredOnTwoNodesMakesOnePush() throws {
        enable(delay: 2_000)
        // Both sent before either is answered (a message sent later would mark the first answer read).
        #expect(fixture.send("one", from: "laptop", on: 0) && fixture.send("two", from: "laptop", on: 1))
        fixture.emit(.final("echo one"), on: 0)
        fixture.loop.advance(millis: 0)
        #expect(fixture.runs(on: 1) == ["two"], "the second turn runs on the node that took it")
        fixture.emit(.final("echo two"), on: 1)
        fixture.loop.advance(millis: 0)
        #expect(fixture.journal.pendingPushes.count == 2, "each node stored the push its answer made")
        fixture.loop.advance(millis: 2_000)
        let push = try #require(sinks.deliveries.first)
        #expect(sinks.deliveries.count == 1, "one push for the burst, whichever node stored its parts")
        #expect(push.push.count == 2 && push.content.body.hasPrefix("2 new messages"))
        #expect(fixture.journal.pendingPushes.isEmpty)
        fixture.loop.advance(millis: 60_000)
        #expect(sinks.deliveries.count == 1, "no node sends it again")
    }

    @Test func aPushStoredByANodeThatDiesIsSentOnceByASurvivor() {
        enable(delay: 2_000)
        turn("hi", on: 1)
        fixture.drop(1)
        fixture.nodes[0].hub.declareDead(fixture.nodes[1].identity)
        fixture.loop.advance(millis: 2_000)
        #expect(sinks.deliveries.isEmpty, "the dead node claims nothing, and the push is not stranded yet")
        fixture.loop.advance(millis: 20_000)
        #expect(sinks.deliveries.map(\.content.body) == ["echo hi"], "a survivor's sweep took it")
        #expect(fixture.journal.pendingPushes.isEmpty)
        fixture.loop.advance(millis: 60_000)
        #expect(sinks.deliveries.count == 1)
    }

    @Test func aBurstHeldByALiveNodeIsNotTakenUntilItsClaimLapses() {
        enable(delay: 2_000)
        turn("hi", on: 1)
        sinks.hold = true
        fixture.loop.advance(millis: 2_000)
        #expect(sinks.deliveries.count == 1, "node 1 sends it and has not heard back")
        fixture.loop.advance(millis: 60_000)
        #expect(sinks.deliveries.count == 1, "node 0's sweeps leave a live node's claim alone")
        fixture.loop.advance(millis: 70_000)
        #expect(sinks.deliveries.count == 2, "a claim held past its time is free again")
    }

    @Test func aTargetRegisteredThroughAnotherNodeIsPushedFromThisOne() {
        fixture.journal.pushDevices = []
        fixture.journal.devices["phone"] = DeviceRecord(
            id: "phone",
            userID: fixture.user,
            protocolName: "test",
            claimedName: "Phone",
            deviceInfoJSON: nil,
            isAdmin: false,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: true,
            createdAt: 0,
            lastSeenAt: nil
        )
        enable()
        fixture.nodes[1].hub.pushes.register(deviceID: "phone", kind: .apns, token: target.token, platform: nil) { _ in }
        fixture.loop.runUntilIdle()
        turn("hi", on: 0)
        #expect(sinks.deliveries.map(\.content.body) == ["echo hi"], "node 0 heard the phone registered on node 1")
    }
}
