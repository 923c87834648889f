import Foundation
import RelayCore
import RelayTesting
import RelayTransport
import Testing

@testable import ClawlineBridge

/// The Clawline listener in memory: the real downstream on the core over memory journals,
/// driven by sockets that speak the wire format as the app does.
final class ClawlineTestbed {
    let bed: RelayTestbed
    let downstream: ClawlineDownstream
    let harness: ListenerHarness

    init(settings: ClawlineSettings = ClawlineSettings()) {
        bed = RelayTestbed()
        downstream = ClawlineDownstream(
            settings: settings,
            hub: bed.hub,
            loop: bed.loop,
            clock: bed.clock,
            signingKey: Array("0123456789abcdef0123456789abcdef".utf8),
            dataDirectory: NSTemporaryDirectory() + "clawline-" + UUID().uuidString,
            logger: bed.logger
        )
        downstream.start()
        bed.settle()
        harness = bed.harness(downstream, config: ClawlineDownstream.listenerConfig(settings))
    }

    /// Pairs a new device (the first one becomes the admin at once) and returns its id and token.
    func pair(name: String = "phone") throws -> (deviceID: String, token: String, userID: String) {
        let deviceID = UUID().uuidString.lowercased()
        let socket = harness.connect()
        socket.send(
            json: .object([
                "type": .string("pair_request"), "protocolVersion": .int(1), "deviceId": .string(deviceID), "claimedName": .string(name),
                "deviceInfo": .object(["platform": .string("iOS"), "model": .string("iPhone")]),
            ])
        )
        let result = try #require(socket.readJSON().first)
        #expect(result["type"]?.stringValue == "pair_result" && result["success"]?.boolValue == true, "\(result)")
        return (deviceID, try #require(result["token"]?.stringValue), try #require(result["userId"]?.stringValue))
    }

    /// An authenticated socket of the device, its `auth_result` read.
    func connect(_ deviceID: String, token: String) throws -> (TestSocket, JSONValue) {
        let socket = harness.connect()
        socket.send(json: .object(["type": .string("auth"), "protocolVersion": .int(1), "token": .string(token), "deviceId": .string(deviceID)]))
        let frames = socket.readJSON()
        return (socket, try #require(frames.first { $0["type"]?.stringValue == "auth_result" }))
    }
}

@Suite struct ClawlineDownstreamTests {
    @Test func theFirstDevicePairsAsAdminAuthenticatesAndGetsAnAnswerStreamed() throws {
        let bed = ClawlineTestbed()
        let phone = try bed.pair()
        #expect(bed.bed.journal.devices[phone.deviceID]?.isAdmin == true)
        let (socket, result) = try bed.connect(phone.deviceID, token: phone.token)
        #expect(result["success"]?.boolValue == true && result["isAdmin"]?.boolValue == true && result["userId"]?.stringValue == phone.userID)
        socket.send(json: .object(["type": .string("message"), "id": .string("c_1"), "content": .string("hello")]))
        let frames = socket.readJSON()
        #expect(frames.first { $0["type"]?.stringValue == "ack" }?["id"]?.stringValue == "c_1")
        let messages = frames.filter { $0["type"]?.stringValue == "message" }
        #expect(messages.first?["role"]?.stringValue == "user" && messages.first?["content"]?.stringValue == "hello")
        let final = try #require(messages.last)
        #expect(final["role"]?.stringValue == "assistant" && final["streaming"]?.boolValue == false)
        #expect(final["content"]?.stringValue == "echo: hello")
    }

    @Test func aTokenForAnotherDeviceIsRefusedAndTheSocketCloses() throws {
        let bed = ClawlineTestbed()
        let phone = try bed.pair()
        let (socket, result) = try bed.connect(UUID().uuidString.lowercased(), token: phone.token)
        #expect(result["success"]?.boolValue == false && result["reason"]?.stringValue == "auth_failed")
        #expect(socket.closeFrame?.code == 1008)
    }

    @Test func aSecondDeviceWaitsForTheAdminWhoApprovesItOntoItsOwnAccount() throws {
        let bed = ClawlineTestbed()
        let admin = try bed.pair()
        let (adminSocket, _) = try bed.connect(admin.deviceID, token: admin.token)
        let laptop = UUID().uuidString.lowercased()
        let waiting = bed.harness.connect()
        waiting.send(
            json: .object([
                "type": .string("pair_request"), "protocolVersion": .int(1), "deviceId": .string(laptop), "claimedName": .string("laptop"),
                "deviceInfo": .object(["platform": .string("Linux"), "model": .string("PC")]),
            ])
        )
        #expect(waiting.readJSON().isEmpty, "it waits")
        #expect(bed.bed.journal.pendingPairings["clawline|\(laptop)"] != nil, "mirrored for the CLI")
        let asked = try #require(adminSocket.readJSON().first { $0["type"]?.stringValue == "pair_approval_request" })
        #expect(asked["deviceId"]?.stringValue == laptop && asked["claimedName"]?.stringValue == "laptop")
        let newUser = UUID().uuidString.lowercased()
        adminSocket.send(
            json: .object(["type": .string("pair_decision"), "deviceId": .string(laptop), "approve": .bool(true), "userId": .string(newUser)])
        )
        let result = try #require(waiting.readJSON().first)
        #expect(result["success"]?.boolValue == true && result["userId"]?.stringValue == newUser)
        #expect(bed.bed.journal.pendingPairings.isEmpty && bed.bed.journal.devices[laptop]?.tokenDelivered == true)
    }

    @Test func anUnansweredRequestTimesOutWithPairTimeout() throws {
        var settings = ClawlineSettings()
        settings.pendingTTLSeconds = 60
        let bed = ClawlineTestbed(settings: settings)
        _ = try bed.pair()
        let waiting = bed.harness.connect()
        waiting.send(
            json: .object([
                "type": .string("pair_request"), "protocolVersion": .int(1), "deviceId": .string(UUID().uuidString.lowercased()),
                "deviceInfo": .object(["platform": .string("iOS"), "model": .string("iPad")]),
            ])
        )
        bed.bed.advance(millis: 60_000)
        let result = try #require(waiting.readJSON().first)
        #expect(result["success"]?.boolValue == false && result["reason"]?.stringValue == "pair_timeout", "\(result)")
        #expect(waiting.isClosed)
    }

    @Test func anOperatorRevocationClosesTheDevicesSocketsWithTokenRevoked() throws {
        let bed = ClawlineTestbed()
        let phone = try bed.pair()
        let (socket, _) = try bed.connect(phone.deviceID, token: phone.token)
        bed.bed.hub.devices.cutOff(phone.deviceID)
        let frames = socket.readJSON()
        #expect(frames.contains { $0["type"]?.stringValue == "error" && $0["code"]?.stringValue == "token_revoked" })
        #expect(socket.isClosed)
    }
}
