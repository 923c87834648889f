import ClawlineWire
import Foundation
import RelayCore
import RelayTesting
import RelayTransport
import Testing

@testable import ClawlineBridge

/// The REST side: its pure parts, and the routes over the listener in memory (uploads, which
/// split their body off the loop, are the e2e suite's).
@Suite struct ClawlineHTTPTests {
    typealias Bed = ClawlineTestbed

    @Test func routes() {
        #expect(ClawlineHTTP.route(method: "GET", path: "/version") == .version)
        #expect(ClawlineHTTP.route(method: "POST", path: "/ws") == .upgradeRequired)
        #expect(ClawlineHTTP.route(method: "POST", path: "/upload") == .upload)
        #expect(ClawlineHTTP.route(method: "GET", path: "/download/a_1") == .download(assetID: "a_1"))
        #expect(ClawlineHTTP.route(method: "GET", path: "/upload") == .unknown)
        #expect(ClawlineHTTP.route(method: "DELETE", path: "/download/a_1") == .unknown)
    }

    @Test func bearerTokens() {
        #expect(ClawlineHTTP.bearerToken("Bearer abc") == "abc")
        #expect(ClawlineHTTP.bearerToken("bEaReR  abc ") == "abc", "the scheme in any case")
        #expect(ClawlineHTTP.bearerToken("Bearer ") == nil && ClawlineHTTP.bearerToken("Basic abc") == nil && ClawlineHTTP.bearerToken(nil) == nil)
    }

    @Test func whoMayDownloadAnAsset() {
        let device = DeviceRecord(
            id: "d",
            userID: "u",
            claimedName: nil,
            deviceInfoJSON: "{}",
            isAdmin: false,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: true,
            createdAt: 0,
            lastSeenAt: nil
        )
        var admin = device
        admin.isAdmin = true
        let own = AssetRecord(id: "a_1", userID: "u", mimeType: "image/png", size: 1, path: "/x", createdAt: 0)
        let foreign = AssetRecord(id: "a_2", userID: "v", mimeType: "image/png", size: 1, path: "/x", createdAt: 0)
        #expect(ClawlineHTTP.access(of: device, to: own) == .allowed)
        #expect(ClawlineHTTP.access(of: device, to: foreign) == .denied)
        #expect(ClawlineHTTP.access(of: admin, to: foreign) == .ifSharedWithAdmins)
    }

    @Test func userContentIsServedInert() {
        let html = AssetRecord(id: "a_1", userID: "u", mimeType: "text/html; charset=utf-8", size: 1, path: "/x", createdAt: 0)
        let response = ClawlineHTTP.assetResponse(html)
        #expect(response.contentType == "application/octet-stream")
        #expect(response.headers.contains { $0 == ("x-content-type-options", "nosniff") })
        #expect(response.headers.contains { $0 == ("content-disposition", "attachment") })
        let png = AssetRecord(id: "a_2", userID: "u", mimeType: "image/png", size: 1, path: "/x", createdAt: 0)
        #expect(ClawlineHTTP.assetResponse(png).contentType == "image/png")
    }

    @Test func versionUpgradeAndUnknownPaths() throws {
        let bed = Bed()
        let version = try #require(bed.harness.request("GET", "/version"))
        #expect(version.status == 200 && version.json == .object(["protocolVersion": .int(1)]))
        let plain = try #require(bed.harness.request("GET", "/ws"))
        #expect(plain.status == 426 && plain.headers.contains { $0 == ("upgrade", "websocket") })
        #expect(plain.json?["type"]?.stringValue == "error" && plain.json?["code"]?.stringValue == "invalid_message")
        let unknown = try #require(bed.harness.request("GET", "/nope"))
        #expect(unknown.status == 404 && unknown.json?["code"]?.stringValue == "not_found")
    }

    @Test func downloadsNeedAValidTokenOfADeviceStillAllowed() throws {
        let bed = Bed()
        let (admin, adminSocket) = try bed.setupAdmin()
        let member = try bed.pairAndApprove(via: adminSocket)
        let asset = bed.storeAsset(of: member.userID)
        func download(_ authorization: String?, _ id: String = asset) -> TestResponse? {
            bed.harness.request("GET", "/download/\(id)", headers: RequestHeaders(authorization: authorization))
        }
        #expect(download(nil)?.status == 401 && download(nil)?.json?["code"]?.stringValue == "auth_failed")
        #expect(download("Bearer garbage")?.status == 401)
        #expect(download("bearer \(member.token)")?.status == 200)
        #expect(download("Bearer \(member.token)", "a_\(UUID())")?.json?["code"]?.stringValue == "asset_not_found")
        #expect(download("Bearer \(admin.token)")?.status == 404, "another user's asset")
        bed.revoke(member.deviceID)
        let revoked = download("Bearer \(member.token)")
        #expect(revoked?.status == 403 && revoked?.json?["code"]?.stringValue == "token_revoked")
    }
}
