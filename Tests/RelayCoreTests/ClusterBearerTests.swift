import RelayCore
import RelayTesting
import Testing

/// Devices that present a bearer token on every request (DiscoClaw's), on two nodes of one
/// cluster in memory: a device paired or revoked through one node is known as such on the other.
@Suite struct ClusterBearerTests {
    static let protocolName = "discoclaw"
    let cluster = ClusterFixture(nodes: 2)

    init() {
        for node in cluster.nodes { node.hub.devices.indexBearerTokens(of: Self.protocolName) }
    }

    func devices(_ node: Int) -> Devices { cluster.nodes[node].hub.devices }

    /// Stores an approved device through `node`, as a DiscoClaw registration does.
    func pair(_ id: String, on node: Int) {
        let record = DeviceRecord.bearer(id, userID: cluster.user)
        change(id, on: node) { $0 = record }
    }

    /// Changes the stored device through `node`, as `DELETE /auth/devices/:id` or a rename does.
    func change(_ id: String, on node: Int, _ edit: @escaping @Sendable (inout DeviceRecord?) -> Void) {
        var done = false
        devices(node).update(DeviceSnapshot.Request(deviceID: id)) {
            edit(&$0.device)
        } completion: {
            done = (try? $0.get()) != nil
        }
        cluster.loop.runUntilIdle()
        #expect(done)
    }

    /// What `node` answers for a token hash, once the store answered.
    func authenticate(_ hash: String, on node: Int) -> DeviceRecord? {
        var answer: DeviceRecord??
        devices(node).bearer(tokenHash: hash, protocolName: Self.protocolName) { answer = .some($0) }
        cluster.loop.runUntilIdle()
        return answer ?? nil
    }

    @Test func aDevicePairedThroughOneNodeAuthenticatesOnAnotherWithOneRead() throws {
        var events: [DeviceEvent] = []
        devices(1).observe { events.append($0) }
        pair("d1", on: 0)
        #expect(devices(1).bearer(tokenHash: "hash-d1") == nil, "node 1 started before the pairing")

        // Two requests at once cost one read; both get the device.
        var answers: [String?] = []
        for _ in 0..<2 { devices(1).bearer(tokenHash: "hash-d1", protocolName: Self.protocolName) { answers.append($0?.id) } }
        cluster.loop.runUntilIdle()
        #expect(answers == ["d1", "d1"] && cluster.journal.tokenReads == 1)
        #expect(events.map(\.deviceID) == ["d1"], "the bridge hears of the device (it registers its presence)")

        // Now indexed: no more reads, and the user's device list on node 1 has it.
        #expect(authenticate("hash-d1", on: 1)?.id == "d1" && cluster.journal.tokenReads == 1)
        #expect(devices(1).bearerDevices(protocolName: Self.protocolName, userID: cluster.user).map(\.id) == ["d1"])
    }

    @Test func aDeviceRevokedThroughOneNodeIsRefusedOnTheOtherWithinTheRefresh() throws {
        pair("d1", on: 0)
        pair("d2", on: 0)
        #expect(authenticate("hash-d1", on: 1)?.id == "d1" && authenticate("hash-d2", on: 1)?.id == "d2")
        var events: [DeviceEvent] = []
        devices(1).observe { events.append($0) }

        change("d1", on: 0) {
            $0?.status = .revoked
            $0?.tokenHash = nil
        }
        change("d2", on: 0) { $0?.claimedName = "renamed" }
        #expect(devices(0).bearer(tokenHash: "hash-d1") == nil, "the node that revoked it refuses it at once")
        #expect(devices(1).bearer(tokenHash: "hash-d1")?.id == "d1", "the other node until its next refresh")

        cluster.loop.advance(millis: 2_000)
        #expect(devices(1).bearer(tokenHash: "hash-d1") == nil && authenticate("hash-d1", on: 1) == nil)
        #expect(devices(1).bearer(tokenHash: "hash-d2")?.claimedName == "renamed")
        #expect(events.contains(.cutOff(deviceID: "d1")), "its sockets on node 1 close")
        #expect(events.contains { $0.deviceID == "d2" && $0 != .cutOff(deviceID: "d2") }, "the rename is published")
    }

    @Test func aDevicePairedThroughOneNodeIsIndexedOnTheOtherByTheRefresh() {
        pair("d1", on: 0)
        cluster.loop.advance(millis: 2_000)
        #expect(devices(1).bearer(tokenHash: "hash-d1")?.id == "d1" && cluster.journal.tokenReads == 0)
    }

    /// The operator's `devices revoke` is a control message every live node runs
    /// (`OperatorDesk`): each node's `revoke` drops the device from its index at once.
    @Test func anOperatorRevocationRunOnEachNodeDropsTheDeviceAtOnce() {
        pair("d1", on: 0)
        #expect(authenticate("hash-d1", on: 1)?.id == "d1")
        for node in 0..<2 {
            var answer: String?
            devices(node).revoke("d1") { answer = $0 }
            cluster.loop.runUntilIdle()
            #expect(answer == "revoked")
            #expect(devices(node).bearer(tokenHash: "hash-d1") == nil)
        }
    }

    @Test func aRepeatedBadTokenCostsOneReadUntilItsMissExpires() {
        for _ in 0..<50 { #expect(authenticate("bad", on: 1) == nil) }
        #expect(cluster.journal.tokenReads == 1)
        #expect(devices(1).mayFindBearer(tokenHash: "bad", protocolName: Self.protocolName) == false)
        cluster.loop.advance(millis: 30_001)
        #expect(authenticate("bad", on: 1) == nil && cluster.journal.tokenReads == 2)
    }

    @Test func aSingleNodeNeverReadsOnAMiss() {
        let core = CoreFixture()
        core.hub.devices.indexBearerTokens(of: Self.protocolName)
        var answered = false
        core.hub.devices.bearer(tokenHash: "unknown", protocolName: Self.protocolName) { answered = $0 == nil }
        #expect(answered, "answered at once")
        #expect(core.journal.tokenReads == 0)
        #expect(core.hub.devices.mayFindBearer(tokenHash: "unknown", protocolName: Self.protocolName) == false)
    }
}

extension DeviceRecord {
    /// An approved DiscoClaw device whose token hash is `hash-<id>`.
    static func bearer(_ id: String, userID: String = "u1", name: String = "phone", seen: Int64? = nil) -> DeviceRecord {
        DeviceRecord(
            id: id,
            userID: userID,
            protocolName: "discoclaw",
            claimedName: name,
            deviceInfoJSON: nil,
            isAdmin: false,
            status: .approved,
            tokenHash: "hash-\(id)",
            tokenDelivered: true,
            createdAt: 1,
            lastSeenAt: seen
        )
    }
}

extension DeviceEvent {
    fileprivate var deviceID: String {
        switch self {
        case .cutOff(let deviceID): deviceID
        case .changed(let record): record.id
        }
    }
}
