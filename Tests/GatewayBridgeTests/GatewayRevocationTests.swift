import GatewayWire
import Logging
import RelayCore
import RelayTesting
import Testing

@testable import GatewayBridge

/// `clawrelay devices revoke` on gateway devices: refused with OpenClaw's `PAIRING_REJECTED`
/// until `devices allow`, after which the device asks again as a new one would.
@Suite struct GatewayRevocationTests {
    func revoke(_ bed: GatewayTestbed, _ device: TestDevice) {
        var outcome: String?
        bed.bed.hub.devices.revoke(device.deviceID) { outcome = $0 }
        bed.bed.settle()
        #expect(outcome == "revoked")
    }

    /// What `clawrelay devices allow` does to a revoked device's record.
    func allow(_ bed: GatewayTestbed, _ device: TestDevice) {
        bed.bed.hub.devices.update(DeviceSnapshot.Request(deviceID: device.deviceID)) {
            $0.device?.status = .unpaired
        } completion: { _ in
        }
        bed.bed.settle()
    }

    func expectRejected(_ answer: JSONValue, _ device: TestDevice, client: GatewayTestClient) {
        let error = answer["error"]
        #expect(error?["code"] == .string("NOT_PAIRED") && error?["details"]?["code"] == .string("PAIRING_REJECTED"), "\(answer)")
        #expect(error?["details"]?["pauseReconnect"] == .bool(true) && error?["details"]?["deviceId"] == .string(device.deviceID))
        #expect(error?["message"] == .string("this device was revoked: run clawrelay devices allow \(device.deviceID) on the relay"))
        #expect(client.closeCode == 1008)
    }

    @Test func aRevokedDeviceIsRefusedWithItsTokenOrWithoutUntilAllowedThenAsksAsANewDevice() throws {
        let bed = GatewayTestbed()
        let device = TestDevice()
        let (live, _) = try bed.paired(device)
        revoke(bed, device)
        #expect(live.closeCode == 1008 && live.socket.closeFrame?.reason == "device revoked")

        // With its token or without it: refused, and no request waits.
        var withoutToken = ConnectOptions()
        withoutToken.auth = ConnectParams.Auth()
        for options in [ConnectOptions(), withoutToken] {
            let client = try bed.open()
            expectRejected(try client.connect(device, options), device, client: client)
        }
        #expect(bed.bed.hub.devices.pairing.requests().isEmpty && bed.bed.journal.pendingPairings.isEmpty)

        allow(bed, device)
        let again = try bed.open()
        let asked = try again.connect(device, withoutToken)
        #expect(asked["error"]?["details"]?["code"] == .string("PAIRING_REQUIRED") && asked["error"]?["details"]?["reason"] == .string("not-paired"))
        let pending = bed.bed.hub.devices.pairing.requests()
        #expect(pending.map(\.deviceID) == [device.deviceID] && pending.first?.reason == "not-paired")
        let created = bed.bed.journal.devices[device.deviceID]?.createdAt
        bed.approve(device)
        #expect(bed.bed.journal.devices[device.deviceID]?.status == .approved && bed.bed.journal.devices[device.deviceID]?.createdAt == created)
        device.token = ""
        let (back, _) = try bed.paired(device)
        #expect(back.closeCode == nil)
    }

    @Test func aDeviceRevokedWhileItWaitsIsStoredRevokedAndPairingOperatorsHearItResolved() throws {
        let bed = GatewayTestbed()
        let (admin, _) = try bed.paired(TestDevice(), .scopes(["operator.admin"]))
        let device = TestDevice()
        let waiting = try bed.open()
        #expect(try waiting.connect(device)["error"]?["details"]?["code"] == .string("PAIRING_REQUIRED"))
        revoke(bed, device)
        #expect(bed.bed.journal.devices[device.deviceID]?.status == .revoked && bed.bed.hub.devices.pairing.requests().isEmpty)
        #expect(admin.events("device.pair.resolved").last?["payload"]?["decision"] == .string("rejected"))
        let retry = try bed.open()
        expectRejected(try retry.connect(device), device, client: retry)
    }

    @Test func loopbackAutoApprovalDoesNotLetARevokedDeviceBackIn() throws {
        var settings = GatewaySettings()
        settings.autoApproveLoopback = true
        let bed = GatewayTestbed(settings: settings)
        let device = TestDevice()
        _ = try bed.paired(device)
        revoke(bed, device)
        let client = try bed.open()
        expectRejected(try client.connect(device), device, client: client)
    }

    @Test func aWaitingDevicesRefusalsAreLoggedAtInfoOncePerRequest() throws {
        let bed = GatewayTestbed()
        let device = TestDevice()
        for _ in 0..<3 { _ = try bed.open().connect(device) }
        #expect(bed.downstream.waitsLogged.keys.sorted() == [device.deviceID])
        #expect(!bed.downstream.announcesWait(of: device.deviceID), "the same window: debug")
        bed.approve(device)
        #expect(bed.downstream.waitsLogged.isEmpty, "decided: the next wait is news")
        let later = TestDevice()
        #expect(bed.downstream.announcesWait(of: later.deviceID))
        bed.bed.loop.advance(millis: GatewayDownstream.waitLogMillis)
        #expect(bed.downstream.announcesWait(of: later.deviceID), "ten minutes on, the wait is logged again")
    }

    @Test func quietedRefusalsLogAtDebugAndKeepEveryOtherEffect() {
        let effects: [GatewaySocketMachine.Effect] = [
            .send("x"), .logRefusal(.connectFirst, closing: .policyViolation), .close(.policyViolation, reason: "r"),
        ]
        #expect(
            effects.map(GatewayDownstream.quieted) == [.send("x"), .logRefusal(.connectFirst, closing: nil), .close(.policyViolation, reason: "r")]
        )
    }
}
