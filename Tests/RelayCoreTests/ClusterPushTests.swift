import RelayCore
import RelayTesting
import Testing

/// Pushes in a cluster: the node that stores an answer asks where the other nodes say the device is.
@Suite struct ClusterPushTests {
    let fixture = ClusterFixture(nodes: 2)
    let sinks = RecordingDispatcher()

    init() {
        let target = PushTarget(deviceID: "phone", kind: .apns, token: String(repeating: "ab", count: 32), registeredAt: 0)
        fixture.journal.pushDevices = [PushDevice(deviceID: "phone", userID: fixture.user, protocolName: "test", targets: [target])]
        fixture.nodes[0].hub.pushes.enable(dispatcher: sinks, settings: Pushes.Settings())
        fixture.loop.runUntilIdle()
    }

    /// A turn from the laptop on node 0, answered there.
    func turn(_ text: String) {
        fixture.send(text, from: "laptop", on: 0)
        fixture.emit(.final("echo \(text)"), on: 0)
        fixture.loop.advance(millis: 0)
    }

    @Test func aPhoneInTheForegroundOnAnotherNodeGetsNoPushAndOneOnceInTheBackground() {
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
        fixture.connect("laptop", on: 0)
        fixture.connect("phone", on: 1)
        fixture.drop(1)
        fixture.nodes[0].hub.declareDead(fixture.nodes[1].identity)
        fixture.loop.runUntilIdle()
        turn("hi")
        #expect(sinks.deliveries.count == 1, "the phone's only foreground was on a dead node")
    }
}
