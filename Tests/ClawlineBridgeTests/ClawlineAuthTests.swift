import ClawlineWire
import Foundation
import RelayCore
import RelayTesting
import RelayTransport
import Testing

@testable import ClawlineBridge

/// `auth` over the listener in memory: the result's fields, every way a token is refused, the
/// limits, and what a socket may do before it authenticates.
@Suite struct ClawlineAuthTests {
    typealias Bed = ClawlineTestbed

    /// `auth` refused: `auth_result` alone (nothing of the session), then close 1008.
    func expectRefused(_ bed: Bed, _ frame: JSONValue, reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let socket = bed.harness.connect()
        let frames = socket.exchange(frame)
        #expect(frames.map(\.type) == ["auth_result"], "\(frames)", sourceLocation: sourceLocation)
        let result = frames.first ?? .null
        #expect(result["success"] == .bool(false) && result["reason"]?.stringValue == reason, "\(result)", sourceLocation: sourceLocation)
        #expect(result["sessionId"] == nil && result["token"] == nil && result["userId"] == nil, sourceLocation: sourceLocation)
        socket.expectClosed(1008, sourceLocation: sourceLocation)
    }

    @Test func aSuccessfulAuthSaysWhoAndWhatFollows() throws {
        let bed = Bed()
        let admin = try bed.pairFirstAdmin()
        let first = try bed.connect(admin)
        #expect(first.result["userId"]?.stringValue == admin.userID)
        #expect(first.result["replayCount"] == .int(0) && first.result["replayTruncated"] == .bool(false))
        #expect(first.result["historyReset"]?.boolValue != nil && first.result["isAdmin"] == .bool(true))
        let sessionID = try #require(first.result["sessionId"]?.stringValue)
        #expect(!sessionID.isEmpty)
        #expect(first.userInfo == .object(["type": .string("user_info"), "userId": .string(admin.userID), "isAdmin": .bool(true)]))
        first.socket.expectOpen()
        first.socket.close()
        let second = try bed.connect(admin, cursor: .null)
        #expect(second.result["sessionId"]?.stringValue != sessionID, "each connection gets its own session id")
        #expect(second.result["replayCount"] == .int(0), "a null cursor is an absent one")
    }

    @Test func theResultSaysWhetherTheDeviceIsAnAdmin() throws {
        let bed = Bed()
        let (admin, adminSocket) = try bed.setupAdmin()
        let member = try bed.pairAndApprove(via: adminSocket)
        #expect(try bed.connect(admin).result["isAdmin"] == .bool(true))
        let session = try bed.connect(member)
        #expect(session.result["isAdmin"] == .bool(false) && session.userInfo["isAdmin"] == .bool(false))
    }

    static let tamperings = ["garbage", "empty", "three-dots", "bad-signature", "no-signature", "changed-sub", "no-deviceId-claim", "alg-none"]

    static func tampered(_ token: String, _ kind: String) throws -> String {
        let parts = token.split(separator: ".").map(String.init)
        let (head, payload, signature) = (parts[0], parts[1], parts[2])
        let payloadBytes = try #require(Base64URL.decode(payload))
        var claims = try #require(JSONValue.parse(payloadBytes)?.objectValue)
        func encoded(_ fields: [String: JSONValue]) -> String { Base64URL.encode(Array(JSONValue.object(fields).encoded().utf8)) }
        switch kind {
        case "garbage": return "garbage"
        case "empty": return ""
        case "three-dots": return "a.b.c"
        case "bad-signature": return "\(head).\(payload).\(signature.first == "A" ? "B" : "A")\(signature.dropFirst())"
        case "no-signature": return "\(head).\(payload)."
        case "changed-sub":
            claims["sub"] = .string("00000000-0000-4000-8000-000000000000")
            return "\(head).\(encoded(claims)).\(signature)"
        case "no-deviceId-claim":
            claims["deviceId"] = nil
            return "\(head).\(encoded(claims)).\(signature)"
        default:
            return "\(encoded(["alg": .string("none"), "typ": .string("JWT")])).\(payload)."
        }
    }

    @Test(arguments: tamperings)
    func aBadTokenIsAuthFailedAndCloses(_ kind: String) throws {
        let bed = Bed()
        var admin = try bed.pairFirstAdmin()
        admin.token = try Self.tampered(admin.token, kind)
        expectRefused(bed, Bed.auth(admin), reason: "auth_failed")
    }

    @Test func aTokenPresentedWithAnotherDeviceIDFails() throws {
        let bed = Bed()
        let (admin, adminSocket) = try bed.setupAdmin()
        let sibling = try bed.pairAndApprove(via: adminSocket, userID: admin.userID)
        for deviceID in [sibling.deviceID, Bed.newDeviceID()] {
            expectRefused(bed, Bed.auth(.init(deviceID: deviceID, token: admin.token, userID: admin.userID)), reason: "auth_failed")
        }
        adminSocket.expectOpen()
    }

    @Test func anExpiredTokenIsAuthFailedNotRevokedOverHTTPToo() throws {
        var settings = ClawlineSettings()
        settings.tokenTTLSeconds = 60
        let bed = Bed(settings: settings)
        let admin = try bed.pairFirstAdmin()
        bed.advance(seconds: 61)
        expectRefused(bed, Bed.auth(admin), reason: "auth_failed")
        let upload = try #require(bed.harness.request("POST", "/upload", headers: RequestHeaders(authorization: "Bearer \(admin.token)")))
        #expect(upload.status == 401 && upload.json?["code"]?.stringValue == "auth_failed" && upload.json?["type"]?.stringValue == "error")
    }

    @Test func aRevokedDeviceIsTokenRevoked() throws {
        let bed = Bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let member = try bed.pairAndApprove(via: adminSocket)
        bed.revoke(member.deviceID)
        expectRefused(bed, Bed.auth(member), reason: "token_revoked")
    }

    @Test(arguments: [nil, JSONValue.int(2), .string("1"), .null, .double(1.5), .int(0)])
    func aBadProtocolVersionIsInvalidAndCloses(_ version: JSONValue?) throws {
        let bed = Bed()
        let admin = try bed.pairFirstAdmin()
        guard case .object(var frame) = Bed.auth(admin) else { return }
        frame["protocolVersion"] = version
        let socket = bed.harness.connect()
        #expect(socket.exchange(.object(frame)).errorCodes == ["invalid_message"])
        socket.expectClosed(1008)
    }

    @Test(arguments: ["token", "deviceId"])
    func aMissingFieldIsInvalidButOpen(_ field: String) throws {
        let bed = Bed()
        let admin = try bed.pairFirstAdmin()
        guard case .object(var frame) = Bed.auth(admin) else { return }
        frame[field] = nil
        let socket = bed.harness.connect()
        #expect(socket.exchange(.object(frame)).errorCodes == ["invalid_message"])
        socket.expectOpen()
    }

    @Test func theAuthLimitClosesTheSocketAndSurvivesReconnects() throws {
        var settings = ClawlineSettings()
        settings.authAttemptsPerMinute = 2
        let bed = Bed(settings: settings)
        let admin = try bed.pairFirstAdmin()
        for _ in 0..<2 { try bed.connect(admin).socket.close() }
        let socket = bed.harness.connect()
        let frames = socket.exchange(Bed.auth(admin))
        #expect(frames.map(\.type) == ["error"] && frames.errorCodes == ["rate_limited"], "\(frames)")
        socket.expectClosed(1008)
        bed.advance(seconds: 60)
        _ = try bed.connect(admin)
    }

    @Test func failedAttemptsCountTowardTheLimit() throws {
        var settings = ClawlineSettings()
        settings.authAttemptsPerMinute = 2
        let bed = Bed(settings: settings)
        var admin = try bed.pairFirstAdmin()
        let token = admin.token
        admin.token = try Self.tampered(token, "bad-signature")
        for _ in 0..<2 { expectRefused(bed, Bed.auth(admin), reason: "auth_failed") }
        admin.token = token
        let socket = bed.harness.connect()
        #expect(socket.exchange(Bed.auth(admin)).errorCodes == ["rate_limited"])
        socket.expectClosed(1008)
    }

    @Test(arguments: [Bed.message("hello", id: "c_1"), .object(["type": .string("typing"), "active": .bool(true)])])
    func chatBeforeAuthIsAuthFailedAndCloses(_ frame: JSONValue) throws {
        let bed = Bed()
        _ = try bed.pairFirstAdmin()
        let socket = bed.harness.connect()
        #expect(socket.exchange(frame).errorCodes == ["auth_failed"])
        socket.expectClosed(1008)
    }

    @Test func aSecondAuthOnTheSameSocketIsInvalid() throws {
        let bed = Bed()
        let admin = try bed.pairFirstAdmin()
        let session = try bed.connect(admin)
        #expect(session.socket.exchange(Bed.auth(admin)).errorCodes == ["invalid_message"])
        session.socket.expectOpen()
    }

    @Test func aFailedTakeoverLeavesTheOldSocketActive() throws {
        let bed = Bed()
        let (admin, old) = try bed.setupAdmin()
        expectRefused(bed, Bed.auth(.init(deviceID: admin.deviceID, token: "not-a-jwt", userID: admin.userID)), reason: "auth_failed")
        #expect(old.exchange(Bed.message("still alive")).finals == ["echo: still alive"])
    }
}
