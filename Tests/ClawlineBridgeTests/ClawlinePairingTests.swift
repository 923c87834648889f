import ClawlineWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import ClawlineBridge

/// Pairing over the listener in memory: the first admin, approvals and denials, the pending book
/// and its time limit, re-pairing, validation and limits.
@Suite struct ClawlinePairingTests {
    typealias Bed = ClawlineTestbed

    func settings(_ change: (inout ClawlineSettings) -> Void) -> ClawlineSettings {
        var settings = ClawlineSettings()
        change(&settings)
        return settings
    }

    func approvals(_ frames: [JSONValue], for deviceID: String) -> [JSONValue] {
        frames.filter { $0.type == "pair_approval_request" && $0["deviceId"]?.stringValue == deviceID }
    }

    @Test func theFirstDeviceBecomesAdminWithAYearLongToken() throws {
        let bed = Bed()
        let admin = try bed.pairFirstAdmin()
        let claims = try HS256Token(secret: Bed.signingKey).verify(admin.token, nowSeconds: 0).get()
        #expect(claims.exp - claims.iat == 31_536_000 && claims.isAdmin && claims.sub == admin.userID)
        let record = try #require(bed.device(admin.deviceID))
        #expect(record.isAdmin && record.status == .approved && record.tokenDelivered && record.claimedName == "Admin" && record.lastSeenAt == nil)
    }

    @Test func optionalDeviceInfoFieldsMayBeOmitted() throws {
        let bed = Bed()
        let deviceID = Bed.newDeviceID()
        let socket = bed.harness.connect()
        let frames = socket.exchange(
            .object([
                "type": .string("pair_request"), "protocolVersion": .int(1), "deviceId": .string(deviceID),
                "deviceInfo": .object(["platform": .string("iOS"), "model": .string("iPhone 15")]),
            ])
        )
        try Bed.expectPaired(try #require(frames.first), deviceID: deviceID)
    }

    @Test func theFirstAdminIsTheFirstRequestNotTheFirstConnection() throws {
        let bed = Bed()
        let early = bed.harness.connect()
        let late = Bed.newDeviceID()
        let lateSocket = bed.requestPairing(late)
        try Bed.expectPaired(try #require(lateSocket.readJSON().first), deviceID: late)
        let earlyID = Bed.newDeviceID()
        #expect(early.exchange(Bed.pairRequest(earlyID)).isEmpty, "it waits")
        #expect(bed.isPending(earlyID) && bed.device(late)?.isAdmin == true)
    }

    @Test func anAdminApprovesOntoAnExistingAccount() throws {
        let bed = Bed()
        let (admin, adminSocket) = try bed.setupAdmin()
        let sibling = try bed.pairAndApprove(via: adminSocket, userID: admin.userID)
        #expect(try bed.connect(sibling).result["userId"]?.stringValue == admin.userID)
    }

    @Test func aDenialSendsPairDeniedAndCloses() throws {
        let bed = Bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let deviceID = Bed.newDeviceID()
        let requester = bed.requestPairing(deviceID)
        #expect(approvals(adminSocket.readJSON(), for: deviceID).count == 1)
        adminSocket.send(json: Bed.decision(deviceID, approve: false))
        #expect(requester.readJSON() == [.object(["type": .string("pair_result"), "success": .bool(false), "reason": .string("pair_denied")])])
        requester.expectClosed(1000)
        adminSocket.expectOpen()
        #expect(!bed.isPending(deviceID) && bed.device(deviceID) == nil)
    }

    @Test func pendingRequestsReachAnAdminWhenItAuthenticates() throws {
        let bed = Bed()
        let admin = try bed.pairFirstAdmin()
        let deviceID = Bed.newDeviceID()
        let requester = bed.requestPairing(deviceID, name: "Late")
        let session = try bed.connect(admin)
        let asked = approvals(session.after, for: deviceID)
        #expect(asked.count == 1 && asked.first?["claimedName"]?.stringValue == "Late", "after auth_result and user_info")
        session.socket.send(json: Bed.decision(deviceID))
        try Bed.expectPaired(try #require(requester.readJSON().first), deviceID: deviceID)
    }

    @Test func aPendingRequestTimesOutWithPairTimeoutAndItsDecisionIsUnknown() throws {
        let bed = Bed(settings: settings { $0.pendingTTLSeconds = 10 })
        let (_, adminSocket) = try bed.setupAdmin()
        let deviceID = Bed.newDeviceID()
        let requester = bed.requestPairing(deviceID)
        bed.advance(seconds: 9.9)
        #expect(requester.readJSON().isEmpty, "not before the time limit")
        bed.advance(seconds: 0.1)
        #expect(requester.readJSON() == [.object(["type": .string("pair_result"), "success": .bool(false), "reason": .string("pair_timeout")])])
        requester.expectClosed(1000)
        #expect(!bed.isPending(deviceID))
        #expect(approvals(adminSocket.readJSON(), for: deviceID).count == 1)
        #expect(adminSocket.exchange(Bed.decision(deviceID)).errorCodes == ["invalid_message"])
        adminSocket.expectOpen()
    }

    @Test func aRequestExpiresWhileItsRequesterIsAway() throws {
        let bed = Bed(settings: settings { $0.pendingTTLSeconds = 10 })
        let admin = try bed.pairFirstAdmin()
        let deviceID = Bed.newDeviceID()
        bed.requestPairing(deviceID).close()
        #expect(bed.isPending(deviceID))
        bed.advance(seconds: 10)
        #expect(!bed.isPending(deviceID))
        let session = try bed.connect(admin)
        #expect(session.socket.exchange(Bed.decision(deviceID)).errorCodes == ["invalid_message"])
        session.socket.expectOpen()
    }

    @Test func aReconnectingRequestKeepsItsValuesAndItsTimeLimitAndGetsTheResult() throws {
        let bed = Bed(settings: settings { $0.pendingTTLSeconds = 3 })
        let (_, adminSocket) = try bed.setupAdmin()
        let deviceID = Bed.newDeviceID()
        bed.requestPairing(deviceID, name: "Original").close()
        #expect(approvals(adminSocket.readJSON(), for: deviceID).first?["claimedName"]?.stringValue == "Original")
        bed.advance(seconds: 2)
        let second = bed.requestPairing(deviceID, name: "Changed")
        #expect(approvals(adminSocket.readJSON(), for: deviceID).isEmpty, "the same request, not a new one")
        bed.advance(seconds: 1)
        #expect(second.readJSON().first?["reason"]?.stringValue == "pair_timeout", "the reconnect did not reset the 3 s")

        let again = Bed.newDeviceID()
        bed.requestPairing(again, name: "Original").close()
        let third = bed.requestPairing(again, name: "Changed")
        adminSocket.send(json: Bed.decision(again))
        try Bed.expectPaired(try #require(third.readJSON().first), deviceID: again)
        #expect(bed.device(again)?.claimedName == "Original")
    }

    @Test func aDenialWhileTheRequesterIsAwayReachesItsNextRequest() throws {
        let bed = Bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let deviceID = Bed.newDeviceID()
        bed.requestPairing(deviceID).close()
        adminSocket.send(json: Bed.decision(deviceID, approve: false))
        #expect(!bed.isPending(deviceID))
        let again = bed.requestPairing(deviceID)
        #expect(again.readJSON().first?["reason"]?.stringValue == "pair_denied")
        again.expectClosed(1000)
    }

    @Test func anApprovalWhileTheRequesterIsAwayIsIssuedOnItsNextRequest() throws {
        let bed = Bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let deviceID = Bed.newDeviceID()
        bed.requestPairing(deviceID).close()
        let user = Bed.newDeviceID()
        adminSocket.send(json: Bed.decision(deviceID, userID: user))
        #expect(bed.device(deviceID)?.status == .approved && bed.device(deviceID)?.tokenDelivered == false)
        let again = bed.requestPairing(deviceID)
        let result = try #require(again.readJSON().first)
        try Bed.expectPaired(result, deviceID: deviceID)
        #expect(result["userId"]?.stringValue == user && bed.device(deviceID)?.tokenDelivered == true)
    }

    @Test func oneCrashReissueThenRepairingIsRefused() throws {
        let bed = Bed()
        let deviceID = Bed.newDeviceID()
        let admin = try bed.pairFirstAdmin(deviceID)
        let reissued = bed.requestPairing(deviceID)
        let result = try #require(reissued.readJSON().first)
        try Bed.expectPaired(result, deviceID: deviceID)
        #expect(result["userId"]?.stringValue == admin.userID && bed.device(deviceID)?.isAdmin == true && bed.device(deviceID)?.lastSeenAt != nil)
        let third = bed.requestPairing(deviceID)
        #expect(third.readJSON().errorCodes == ["invalid_message"])
        third.expectClosed(1008)
    }

    @Test func repairingAfterAuthIsRefused() throws {
        let bed = Bed()
        let admin = try bed.pairFirstAdmin()
        try bed.connect(admin).socket.close()
        let again = bed.requestPairing(admin.deviceID)
        #expect(again.readJSON().errorCodes == ["invalid_message"])
        again.expectClosed(1008)
    }

    @Test func authWhilePendingIsDeviceNotApproved() throws {
        let bed = Bed()
        _ = try bed.pairFirstAdmin()
        let deviceID = Bed.newDeviceID()
        _ = bed.requestPairing(deviceID)
        let socket = bed.harness.connect()
        let frames = socket.exchange(Bed.auth(.init(deviceID: deviceID, token: "pending.device.token", userID: "")))
        #expect(frames == [.object(["type": .string("auth_result"), "success": .bool(false), "reason": .string("device_not_approved")])])
        #expect(socket.isClosed)
    }

    @Test(arguments: [nil, JSONValue.int(2), .string("1"), .null, .double(1.5)])
    func aBadProtocolVersionIsInvalidAndCloses(_ version: JSONValue?) throws {
        let bed = Bed()
        guard case .object(var frame) = Bed.pairRequest(Bed.newDeviceID()) else { return }
        frame["protocolVersion"] = version
        let socket = bed.harness.connect()
        #expect(socket.exchange(.object(frame)).errorCodes == ["invalid_message"])
        socket.expectClosed(1008)
        #expect(bed.journal.devices.isEmpty)
    }

    static let badDeviceIDs: [JSONValue?] = [
        .string("ABC123"), .string(""), .string("6ba7b810-9dad-11d1-80b4-00c04fd430c8"), .int(12345), .null, nil,
    ]
    static let badDeviceInfos: [JSONValue?] = [
        nil, .null, .object([:]), .string("iPhone"), .object(["platform": .string("iOS")]), .object(["model": .string("iPhone 15")]),
        .object(["platform": .string(""), "model": .string("iPhone 15")]), .object(["platform": .string("iOS"), "model": .string("")]),
        .object(["platform": .null, "model": .string("iPhone 15")]), .object(["platform": .string("iOS"), "model": .int(15)]),
    ]

    @Test func anInvalidRequestKeepsTheSocketOpenAndStoresNothing() throws {
        let bed = Bed()
        for (key, values) in [("deviceId", Self.badDeviceIDs), ("deviceInfo", Self.badDeviceInfos)] {
            for value in values {
                guard case .object(var frame) = Bed.pairRequest(Bed.newDeviceID()) else { return }
                frame[key] = value
                let socket = bed.harness.connect()
                #expect(socket.exchange(.object(frame)).errorCodes == ["invalid_message"], "\(key): \(String(describing: value))")
                socket.expectOpen()
            }
        }
        #expect(bed.journal.devices.isEmpty && bed.journal.pendingPairings.isEmpty)
    }

    @Test func thePairLimitClosesTheSocketAndSurvivesReconnects() throws {
        let bed = Bed(settings: settings { $0.pairRequestsPerMinute = 2 })
        _ = try bed.pairFirstAdmin()
        let deviceID = Bed.newDeviceID()
        let socket = bed.harness.connect()
        for _ in 0..<2 { #expect(socket.exchange(Bed.pairRequest(deviceID)).isEmpty) }
        #expect(bed.isPending(deviceID))
        #expect(socket.exchange(Bed.pairRequest(deviceID)).errorCodes == ["rate_limited"])
        socket.expectClosed(1008)

        let other = Bed.newDeviceID()
        for _ in 0..<2 { bed.requestPairing(other).close() }
        let third = bed.requestPairing(other)
        #expect(third.readJSON().errorCodes == ["rate_limited"])
        third.expectClosed(1008)
    }

    @Test func aFullPendingBookIsRateLimited() throws {
        let bed = Bed(settings: settings { $0.maxPendingRequests = 2 })
        _ = try bed.pairFirstAdmin()
        let ids = (0..<3).map { _ in Bed.newDeviceID() }
        for id in ids.prefix(2) { #expect(bed.requestPairing(id).readJSON().isEmpty) }
        let third = bed.requestPairing(ids[2])
        #expect(third.readJSON().errorCodes == ["rate_limited"])
        #expect(!bed.isPending(ids[2]))
    }

    @Test func onlyAnAuthenticatedAdminDecides() throws {
        let bed = Bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let member = try bed.pairAndApprove(via: adminSocket)
        let memberSocket = try bed.connect(member).socket
        let pending = Bed.newDeviceID()
        _ = bed.requestPairing(pending)
        #expect(memberSocket.exchange(Bed.decision(pending)).errorCodes == ["invalid_message"])
        memberSocket.expectOpen()
        #expect(bed.isPending(pending))
        let fresh = bed.harness.connect()
        #expect(fresh.exchange(Bed.decision(pending)).errorCodes == ["invalid_message"], "before auth")
        #expect(bed.isPending(pending))
    }

    @Test func aDecisionForAnUnknownDeviceIsInvalid() throws {
        let bed = Bed()
        let (_, adminSocket) = try bed.setupAdmin()
        #expect(adminSocket.exchange(Bed.decision(Bed.newDeviceID())).errorCodes == ["invalid_message"])
        adminSocket.expectOpen()
    }

    @Test(arguments: [nil, JSONValue.string(""), .string("not-a-uuid"), .string("6ba7b810-9dad-11d1-80b4-00c04fd430c8"), .null])
    func aBadUserIDIsInvalidAndTheRequestStaysPending(_ userID: JSONValue?) throws {
        let bed = Bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let deviceID = Bed.newDeviceID()
        let requester = bed.requestPairing(deviceID)
        guard case .object(var decision) = Bed.decision(deviceID) else { return }
        decision["userId"] = userID
        #expect(adminSocket.exchange(.object(decision)).errorCodes == ["invalid_message"])
        let good = Bed.newDeviceID()
        adminSocket.send(json: Bed.decision(deviceID, userID: good))
        let result = try #require(requester.readJSON().first)
        try Bed.expectPaired(result, deviceID: deviceID)
        #expect(result["userId"]?.stringValue == good)
    }

    @Test func aSecondDecisionForTheSameRequestIsInvalid() throws {
        let bed = Bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let deviceID = Bed.newDeviceID()
        let requester = bed.requestPairing(deviceID)
        adminSocket.send(json: Bed.decision(deviceID))
        try Bed.expectPaired(try #require(requester.readJSON().first), deviceID: deviceID)
        #expect(adminSocket.exchange(Bed.decision(deviceID, approve: false)).errorCodes == ["invalid_message"])
        adminSocket.expectOpen()
        #expect(bed.device(deviceID)?.status == .approved)
    }

    @Test func aRevokedDeviceIsRejectedUntilAllowedThenWaitsForAnAdminAgain() throws {
        let bed = Bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let member = try bed.pairAndApprove(via: adminSocket)
        bed.revoke(member.deviceID)
        let again = bed.requestPairing(member.deviceID)
        #expect(again.readJSON().first?["reason"]?.stringValue == "pair_rejected")
        again.expectClosed(1000)
        #expect(!bed.isPending(member.deviceID))
        bed.operatorChanges(member.deviceID) { $0.status = .unpaired }
        _ = adminSocket.readJSON()
        let allowed = bed.requestPairing(member.deviceID)
        #expect(allowed.readJSON().isEmpty && bed.isPending(member.deviceID), "it waits for an admin")
        #expect(adminSocket.readJSON().ofType("pair_approval_request").count == 1)
    }

    @Test func aDeviceRevokedWhileItWaitsHearsPairRejected() throws {
        let bed = Bed()
        _ = try bed.setupAdmin()
        let deviceID = Bed.newDeviceID()
        let waiting = bed.requestPairing(deviceID)
        bed.hub.devices.revoke(deviceID) { _ in }
        bed.bed.settle()
        #expect(waiting.readJSON().first?["reason"]?.stringValue == "pair_rejected")
        waiting.expectClosed(1000)
        #expect(bed.device(deviceID)?.status == .revoked && !bed.isPending(deviceID))
    }

    @Test func aDenylistedDeviceIsRejected() throws {
        let bed = Bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let member = try bed.pairAndApprove(via: adminSocket)
        bed.operatorChanges(member.deviceID, cutOff: true) { $0.status = .denied }
        let again = bed.requestPairing(member.deviceID)
        #expect(again.readJSON().first?["reason"]?.stringValue == "pair_rejected")
        again.expectClosed(1000)
    }
}
