import CompanionWire
import Foundation
import RelayCore
import RelayTesting
import RelayTransport
import Testing

@testable import CompanionBridge

/// The Companion listener in memory: the real downstream on the core over memory journals, a
/// projects root in a temporary folder, and clients that speak the wire format as the app does
/// (every frame they read is checked against the app's decoder).
final class CompanionTestbed {
    static let token = "e2e_companion-token-0123456789ABCDEF"

    let bed: RelayTestbed
    let downstream: CompanionDownstream
    let harness: ListenerHarness
    let settings: CompanionSettings
    /// The projects root, symlinks resolved (what the relay reports).
    let root: String

    init(
        settings: CompanionSettings = CompanionSettings(),
        backends: [any Backend] = [ScriptedBackend.echo()],
        projects: [String] = ["app", "lib", "tool"]
    ) {
        let folder = NSTemporaryDirectory() + "companion-" + UUID().uuidString
        for name in projects + [".hidden"] {
            try? FileManager.default.createDirectory(atPath: folder + "/" + name, withIntermediateDirectories: true)
        }
        precondition(FileManager.default.createFile(atPath: folder + "/notes.txt", contents: Data("a file, not a project\n".utf8)))
        root = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
        self.settings = settings
        bed = RelayTestbed(backends: backends)
        downstream = CompanionDownstream(
            settings: settings,
            hub: bed.hub,
            loop: bed.loop,
            clock: bed.clock,
            authToken: Self.token,
            projectsRoot: folder,
            logger: bed.logger
        )
        downstream.start()
        bed.settle()
        harness = bed.harness(downstream, config: CompanionDownstream.listenerConfig(settings))
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func path(_ project: String) -> String { root + "/" + project }

    /// A socket as the app opens it (`?token=`, no device id) unless told otherwise.
    func connect(
        device: String? = nil,
        userAgent: String? = nil,
        token: String? = token,
        bearer: Bool = false,
        path: String = "/ws"
    ) -> CompanionClient {
        var headers = RequestHeaders(userAgent: userAgent)
        if let token, bearer { headers.authorization = "Bearer " + token }
        if let token, !bearer { headers.query = "token=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token) }
        if let device { headers.custom["x-device-id"] = device }
        return CompanionClient(harness.connect(path: path, headers: headers))
    }

    /// An HTTP request to the listener, with the token as a bearer header (or `?token=`).
    func rest(
        _ method: String,
        _ path: String,
        json: JSONValue? = nil,
        raw: [UInt8]? = nil,
        token: String? = token,
        query: Bool = false,
        device: String? = nil
    ) throws -> TestResponse {
        var headers = RequestHeaders()
        if let token, query { headers.query = "token=" + token } else if let token { headers.authorization = "Bearer " + token }
        if let device { headers.custom["x-device-id"] = device }
        let body = raw ?? json.map { Array($0.encoded().utf8) }
        return try #require(harness.request(method, path, headers: headers, body: body))
    }

    /// The JSON of a 200 answer.
    func restJSON(_ method: String, _ path: String, json: JSONValue? = nil, status: Int = 200, device: String? = nil) throws -> JSONValue {
        let response = try rest(method, path, json: json, device: device)
        #expect(response.status == status, "\(method) \(path): \(response.status) \(response.text)")
        return try #require(response.json)
    }

    /// `POST /api/projects/:name/start`; returns the whole body.
    func startProject(_ name: String, _ body: JSONValue? = nil, status: Int = 200) throws -> JSONValue {
        try restJSON("POST", "/api/projects/\(name)/start", json: body, status: status)
    }

    /// A project's session id, started as the app starts it.
    func session(_ name: String) throws -> String { try #require(try startProject(name)["session"]?["sessionId"]?.stringValue) }

    /// `GET /api/sessions`' details by session id.
    func sessionDetails() throws -> [String: JSONValue] {
        let details = try restJSON("GET", "/api/sessions")["details"]?.arrayValue ?? []
        return Dictionary(details.compactMap { detail in detail["sessionId"]?.stringValue.map { ($0, detail) } }) { first, _ in first }
    }

    /// The relay's id of the device that connected with `x-device-id: device`.
    static func deviceID(_ device: String) -> String { "companion:" + device }
}
