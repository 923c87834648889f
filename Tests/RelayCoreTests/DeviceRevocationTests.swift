import RelayCore
import RelayTesting
import Testing

@Suite struct DeviceRevocationTests {
    let core = CoreFixture()
    var devices: Devices { core.hub.devices }

    func revoke(_ deviceID: String) -> String? {
        var outcome: String?
        devices.revoke(deviceID) { outcome = $0 }
        core.loop.runUntilIdle()
        return outcome
    }

    @Test func aPendingDeviceRevokedStaysRevokedAndItsWaitingClientIsTold() {
        var decisions: [PairingRequests.Decision] = []
        var events: [DeviceEvent] = []
        devices.pairing.decide(for: "gateway") { _, decision, completion in
            decisions.append(decision)
            completion("told")
        }
        devices.observe { events.append($0) }
        let draft = PairingRequests.Request(
            deviceID: "d1",
            protocolName: "gateway",
            claimedName: "laptop",
            info: .object(["key": .string("k")]),
            remoteAddress: "10.0.0.1",
            reason: "not-paired"
        )
        _ = devices.pairing.admit(draft, ttlMillis: 60_000, capacity: 10)
        #expect(core.journal.pendingPairings["gateway|d1"]?.reason == "not-paired")

        #expect(revoke("d1") == "revoked")
        let record = core.journal.devices["d1"]
        #expect(record?.status == .revoked && record?.userID == "" && record?.protocolName == "gateway" && record?.claimedName == "laptop")
        #expect(decisions == [.revoke] && events == [.cutOff(deviceID: "d1")])
        #expect(devices.pairing.requests().isEmpty && core.journal.pendingPairings.isEmpty && core.loop.pendingTimers == 0)
    }

    @Test func aPairedDeviceIsRevokedAndAnUnknownOneIsNot() {
        let paired = DeviceRecord(
            id: "d2",
            userID: core.user,
            protocolName: "clawline",
            claimedName: nil,
            deviceInfoJSON: nil,
            isAdmin: false,
            status: .approved,
            tokenHash: "h",
            tokenDelivered: true,
            createdAt: 1,
            lastSeenAt: nil
        )
        devices.update(DeviceSnapshot.Request(deviceID: "d2"), { $0.device = paired }, completion: { _ in })
        core.loop.runUntilIdle()
        #expect(revoke("d2") == "revoked" && core.journal.devices["d2"]?.status == .revoked)
        #expect(revoke("nobody")?.hasPrefix("no device and no pending request") == true && core.journal.devices["nobody"] == nil)
    }

    @Test func onlyRevokedAndDenylistedDevicesRefusePairing() {
        #expect(DeviceRecord.Status.revoked.refusesPairing && DeviceRecord.Status.denied.refusesPairing)
        #expect(!DeviceRecord.Status.approved.refusesPairing && !DeviceRecord.Status.unpaired.refusesPairing)
    }
}
