import ClawlineWire
import Foundation
import RelayCore
import RelayTesting
import RelayTransport
import Testing

@testable import ClawlineBridge

/// What today's app needs beyond the v1 guide, in memory: `user_info`, and the admin channel
/// every admin device shares, answered by its own backend.
@Suite struct ClawlineAdminChannelTests {
    typealias Bed = ClawlineTestbed

    /// Personal messages go to `echo`, the admin channel to `ops`.
    func bed() -> Bed {
        var settings = ClawlineSettings()
        settings.adminBackend = "ops"
        let ops = ScriptedBackend(name: "ops") { turn in [.final("ops: \(turn.text)")] }
        return Bed(settings: settings, backends: [ScriptedBackend.echo(), ops])
    }

    func makeAdmin(_ bed: Bed, _ deviceID: String, _ isAdmin: Bool = true) { bed.operatorChanges(deviceID) { $0.isAdmin = isAdmin } }

    @Test func theAdminChannelIsSharedByAdminDevicesOfAnyUserAndAnsweredByItsBackend() throws {
        let bed = bed()
        let (admin, adminSocket) = try bed.setupAdmin()
        let other = try bed.pairAndApprove(via: adminSocket, name: "Other")
        let otherSocket = try bed.connect(other).socket
        makeAdmin(bed, other.deviceID)
        #expect(otherSocket.readJSON() == [.object(["type": .string("user_info"), "userId": .string(other.userID), "isAdmin": .bool(true)])])

        let frames = adminSocket.exchange(Bed.message("status?", id: "c_a", channel: .admin))
        #expect(frames.ackIDs == ["c_a"] && frames.finals == ["ops: status?"])
        #expect(frames.filter { $0.type == "message" || $0.type == "typing" }.allSatisfy { $0["channelType"]?.stringValue == "admin" })
        #expect(frames.first { $0.isUserEcho }?["deviceId"]?.stringValue == admin.deviceID)
        let seen = otherSocket.readJSON()
        #expect(seen.finals == ["ops: status?"] && seen.first { $0.isAssistantFinal }?["id"] == frames.first { $0.isAssistantFinal }?["id"])

        let personal = adminSocket.exchange(Bed.message("mine"))
        #expect(
            personal.finals == ["echo: mine"] && personal.filter { $0.type == "message" }.allSatisfy { $0["channelType"]?.stringValue == "personal" }
        )
        #expect(otherSocket.readJSON().isEmpty, "another user's personal channel")
    }

    @Test func aMemberCannotWriteToOrHearTheAdminChannel() throws {
        let bed = bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let member = try bed.pairAndApprove(via: adminSocket)
        let memberSocket = try bed.connect(member).socket
        let refused = memberSocket.exchange(Bed.message("let me in", id: "c_m", channel: .admin))
        #expect(refused.errorCodes == ["invalid_message"] && refused.first?["messageId"]?.stringValue == "c_m")
        memberSocket.expectOpen()
        #expect(adminSocket.exchange(Bed.message("admins only", channel: .admin)).finals == ["ops: admins only"])
        #expect(memberSocket.readJSON().isEmpty)
        let team = JSONValue.object(["type": .string("message"), "id": .string("c_t"), "content": .string("which?"), "channelType": .string("team")])
        #expect(memberSocket.exchange(team).ofType("error").first?["messageId"]?.stringValue == "c_t")
    }

    @Test func replayGivesAdminsBothChannelsInOrderAndMembersTheirOwn() throws {
        let bed = bed()
        let (admin, adminSocket) = try bed.setupAdmin()
        let sibling = try bed.pairAndApprove(via: adminSocket, userID: admin.userID, name: "Sibling")
        _ = adminSocket.exchange(Bed.message("p1"))
        _ = adminSocket.exchange(Bed.message("a1", channel: .admin))
        _ = adminSocket.exchange(Bed.message("p2"))
        adminSocket.close()
        let again = try bed.connect(admin)
        let expected: [(String, String)] = [
            ("p1", "personal"), ("echo: p1", "personal"), ("a1", "admin"), ("ops: a1", "admin"), ("p2", "personal"), ("echo: p2", "personal"),
        ]
        #expect(again.after.map { $0["content"]?.stringValue ?? "" } == expected.map(\.0))
        #expect(again.after.map { $0["channelType"]?.stringValue ?? "" } == expected.map(\.1))
        again.socket.close()
        let fromAdmin = try bed.connect(admin, cursor: again.after[2]["id"])
        #expect(fromAdmin.result["historyReset"] == .bool(false), "a cursor in the admin channel resumes both")
        #expect(fromAdmin.after.map { $0["content"]?.stringValue } == ["ops: a1", "p2", "echo: p2"])
        let mine = try bed.connect(sibling)
        #expect(mine.after.map { $0["content"]?.stringValue } == ["p1", "echo: p1", "p2", "echo: p2"])
    }

    @Test func adminsDownloadTheAssetsSentToTheAdminChannel() throws {
        let bed = bed()
        let (admin, adminSocket) = try bed.setupAdmin()
        let other = try bed.pairAndApprove(via: adminSocket, name: "Other")
        let member = try bed.pairAndApprove(via: adminSocket, name: "Member")
        makeAdmin(bed, other.deviceID)
        let asset = bed.storeAsset(of: admin.userID)
        func download(_ device: Bed.Device) -> Int? {
            bed.harness.request("GET", "/download/\(asset)", headers: RequestHeaders(authorization: "Bearer \(device.token)"))?.status
        }
        #expect(download(admin) == 200 && download(other) == 404)
        let attachment = JSONValue.object(["type": .string("asset"), "assetId": .string(asset)])
        #expect(adminSocket.exchange(Bed.message("screenshot", attachments: [attachment], channel: .admin)).finals == ["ops: screenshot"])
        #expect(download(other) == 200 && download(member) == 404)
    }

    @Test func anAdminRemovedByTheOperatorLeavesTheChannelAtOnce() throws {
        let bed = bed()
        let (_, adminSocket) = try bed.setupAdmin()
        let other = try bed.pairAndApprove(via: adminSocket, name: "Other")
        makeAdmin(bed, other.deviceID)
        let session = try bed.connect(other)
        #expect(session.result["isAdmin"] == .bool(true))
        makeAdmin(bed, other.deviceID, false)
        #expect(session.socket.readJSON() == [.object(["type": .string("user_info"), "userId": .string(other.userID), "isAdmin": .bool(false)])])
        let refused = session.socket.exchange(Bed.message("still here?", id: "c_s", channel: .admin))
        #expect(refused.errorCodes == ["invalid_message"] && refused.first?["messageId"]?.stringValue == "c_s")
        #expect(adminSocket.exchange(Bed.message("admins only", channel: .admin)).finals == ["ops: admins only"])
        #expect(session.socket.readJSON().isEmpty, "no longer hears it")
    }
}
