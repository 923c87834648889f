import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import ClawlineBridge

/// The listener's main paths in memory, end to end: pairing, auth, a message answered, revocation.
@Suite struct ClawlineDownstreamTests {
    typealias Bed = ClawlineTestbed

    @Test func theFirstDevicePairsAsAdminAuthenticatesAndGetsAnAnswerStreamed() throws {
        let bed = Bed()
        let phone = try bed.pairFirstAdmin()
        #expect(bed.device(phone.deviceID)?.isAdmin == true)
        let session = try bed.connect(phone)
        #expect(session.result["isAdmin"] == .bool(true) && session.result["userId"]?.stringValue == phone.userID)
        let frames = session.socket.exchange(Bed.message("hello", id: "c_1"))
        #expect(frames.first == .object(["type": .string("ack"), "id": .string("c_1")]), "the ack comes first")
        let echo = try #require(frames.first { $0.isUserEcho })
        #expect(echo["content"]?.stringValue == "hello" && echo["deviceId"]?.stringValue == phone.deviceID)
        #expect(echo["id"]?.stringValue?.hasPrefix("s_") == true && echo["channelType"]?.stringValue == "personal")
        let final = try #require(frames.last { $0.isAssistantFinal })
        #expect(final["content"]?.stringValue == "echo: hello" && final["deviceId"] == nil)
        let typing = frames.ofType("typing")
        #expect(typing.map { $0["active"] } == [.bool(true), .bool(false)] && typing.allSatisfy { $0["role"]?.stringValue == "assistant" })
    }

    @Test func aSecondDeviceWaitsForTheAdminWhoApprovesItOntoItsOwnAccount() throws {
        let bed = Bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let laptop = Bed.newDeviceID()
        let waiting = bed.requestPairing(laptop, name: "laptop")
        #expect(waiting.readJSON().isEmpty, "it waits")
        #expect(bed.isPending(laptop), "mirrored for the CLI")
        let asked = try #require(adminSocket.readJSON().first { $0.type == "pair_approval_request" })
        #expect(asked["deviceId"]?.stringValue == laptop && asked["claimedName"]?.stringValue == "laptop")
        #expect(asked["deviceInfo"]?["platform"]?.stringValue == "iOS" && asked["deviceInfo"]?["model"]?.stringValue == "iPhone 15")
        let newUser = Bed.newDeviceID()
        adminSocket.send(json: Bed.decision(laptop, userID: newUser))
        let result = try #require(waiting.readJSON().first)
        try Bed.expectPaired(result, deviceID: laptop)
        #expect(result["userId"]?.stringValue == newUser)
        #expect(!bed.isPending(laptop) && bed.device(laptop)?.tokenDelivered == true)
        #expect(bed.device(laptop)?.isAdmin == false && bed.device(laptop)?.userID == newUser)
        let session = try bed.connect(.init(deviceID: laptop, token: try #require(result["token"]?.stringValue), userID: newUser))
        #expect(session.result["userId"]?.stringValue == newUser)
    }

    @Test func anOperatorRevocationClosesTheDevicesSocketsWithTokenRevoked() throws {
        let bed = Bed()
        let phone = try bed.pairFirstAdmin()
        let session = try bed.connect(phone)
        bed.revoke(phone.deviceID)
        #expect(session.socket.readJSON().errorCodes == ["token_revoked"])
        session.socket.expectClosed(1008)
    }
}
