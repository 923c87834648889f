import Foundation
import GatewayWire
import RelayTesting
import RelayTransport
import Testing

@testable import GatewayBridge

/// Plain HTTP on the gateway port: the Control UI build when `control_ui_dir` names one, else 426.
@Suite struct GatewayControlUITests {
    @Test func theBuildIsServedAtTheRootAndTheWebSocketStillAnswers() throws {
        let directory = NSTemporaryDirectory() + "control-ui-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/assets", withIntermediateDirectories: true)
        try Data("<!doctype html>".utf8).write(to: URL(fileURLWithPath: directory + "/index.html"))
        try Data("1".utf8).write(to: URL(fileURLWithPath: directory + "/assets/app.js"))
        var settings = GatewaySettings()
        settings.controlUIDirectory = directory
        let bed = GatewayTestbed(settings: settings)
        for (path, file) in [("/", "index.html"), ("/chat/sessions", "index.html"), ("/assets/app.js", "assets/app.js")] {
            let response = try #require(bed.harness.request("GET", path, body: nil)?.response)
            guard case .file(let served) = response.body else {
                Issue.record("\(path): \(response.status)")
                continue
            }
            #expect(response.status == 200 && served.hasSuffix("/" + file), "\(path)")
        }
        #expect(bed.harness.request("GET", "/../etc/passwd", body: nil)?.status == 404)
        #expect(bed.harness.request("DELETE", "/", body: nil)?.status == 405)
        _ = try bed.paired(TestDevice())
    }

    @Test func withoutABuildPlainHTTPIsUpgradeRequired() throws {
        let bed = GatewayTestbed()
        #expect(bed.harness.request("GET", "/", body: nil)?.status == 426)
        var settings = GatewaySettings()
        settings.controlUIDirectory = NSTemporaryDirectory() + "no-such-ui-" + UUID().uuidString
        #expect(GatewayTestbed(settings: settings).harness.request("GET", "/", body: nil)?.status == 426, "a folder that went away serves nothing")
    }
}
