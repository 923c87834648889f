import DiscoClawWire
import Foundation
import RelayCore
import RelayTesting
import RelayTransport
import Testing

@testable import DiscoClawBridge

/// The DiscoClaw listener in memory: the real downstream on the core over memory journals,
/// called as the app calls it (REST with a bearer token, `/ws?token=`).
final class DiscoClawTestbed {
    static let setupToken = "in-memory-setup-token"
    /// Another person's setup token (`[[discoclaw.users]]`): their devices are the user "stranger".
    static let strangerToken = "in-memory-stranger-token"

    let bed: RelayTestbed
    let downstream: DiscoClawDownstream
    let harness: ListenerHarness

    /// `settings` gets the setup token and a stranger's unless `configure` changes them.
    init(backends: [any Backend] = [ScriptedBackend.echo()], configure: (inout DiscoClawSettings) -> Void = { _ in }) {
        var settings = DiscoClawSettings()
        settings.setupToken = Self.setupToken
        settings.users = [DiscoClawSettings.User(setupToken: Self.strangerToken, userID: "stranger")]
        configure(&settings)
        bed = RelayTestbed(backends: backends)
        downstream = DiscoClawDownstream(settings: settings, hub: bed.hub, clock: bed.clock, logger: bed.logger)
        downstream.start()
        bed.settle()
        harness = bed.harness(downstream, config: DiscoClawDownstream.listenerConfig(settings))
    }

    /// A request as the app sends it: the token as a bearer header (or in the query), a JSON body.
    func call(
        _ method: String,
        _ path: String,
        _ body: JSONValue? = nil,
        token: String? = nil,
        query: String = "",
        inQuery: Bool = false
    ) throws -> TestResponse {
        var headers = RequestHeaders(query: query)
        if let token, inQuery {
            headers.query = ([query].filter { !$0.isEmpty } + ["token=\(token)"]).joined(separator: "&")
        } else if let token {
            headers.authorization = "Bearer \(token)"
        }
        let response = body.map { harness.request(method, path, headers: headers, json: $0) } ?? harness.request(method, path, headers: headers)
        return try #require(response, "\(method) \(path) was not answered")
    }

    /// The body of a response that must have `status`.
    func expect(_ response: TestResponse, _ status: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
        return try #require(response.json, "not JSON: \(response.text)", sourceLocation: sourceLocation)
    }

    /// Registers a device with the listener's setup token (or another).
    func register(name: String? = "iPhone", platform: String = "ios", setupToken: String = setupToken) throws -> AppDevice {
        var body: [String: JSONValue] = ["platform": .string(platform), "setupToken": .string(setupToken)]
        if let name { body["name"] = .string(name) }
        let registered = try expect(call("POST", "/auth/register", .object(body)), 201)
        return AppDevice(
            bed: self,
            userID: try #require(registered["userId"]?.stringValue),
            deviceID: try #require(registered["deviceId"]?.stringValue),
            token: try #require(registered["token"]?.stringValue)
        )
    }

    /// Registers a device of another person (the user "stranger").
    func registerStranger() throws -> AppDevice { try register(name: "stranger's phone", setupToken: Self.strangerToken) }

    /// A socket of the app: `/ws?token=` (or nil for none).
    func connect(token: String?) -> TestSocket {
        harness.connect(headers: RequestHeaders(query: token.map { "token=\($0)" } ?? ""))
    }
}

/// A registered device and the calls the app makes with its token.
struct AppDevice {
    let bed: DiscoClawTestbed
    let userID: String
    let deviceID: String
    let token: String

    func call(_ method: String, _ path: String, _ body: JSONValue? = nil, query: String = "") throws -> TestResponse {
        try bed.call(method, path, body, token: token, query: query)
    }

    /// The body of a call that must answer `status`.
    func json(
        _ method: String,
        _ path: String,
        _ body: JSONValue? = nil,
        query: String = "",
        status: Int = 200,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> JSONValue {
        try bed.expect(call(method, path, body, query: query), status, sourceLocation: sourceLocation)
    }

    func addDevice(name: String = "Mac", platform: String = "macos") throws -> AppDevice {
        let added = try json("POST", "/auth/devices", .object(["name": .string(name), "platform": .string(platform)]), status: 201)
        return AppDevice(
            bed: bed,
            userID: userID,
            deviceID: try #require(added["deviceId"]?.stringValue),
            token: try #require(added["token"]?.stringValue)
        )
    }

    func createConversation(_ title: String? = "chat", backend: String? = nil) throws -> String {
        var body: [String: JSONValue] = [:]
        if let title { body["title"] = .string(title) }
        if let backend { body["backend"] = .string(backend) }
        return try #require(json("POST", "/conversations", .object(body), status: 201)["id"]?.stringValue)
    }

    /// `POST …/messages`; its `201` body.
    func post(_ content: String, in conversationID: String, clientID: String? = UUID().uuidString) throws -> JSONValue {
        var body: [String: JSONValue] = ["content": .string(content)]
        if let clientID { body["clientId"] = .string(clientID) }
        return try json("POST", "/conversations/\(conversationID)/messages", .object(body), status: 201)
    }

    func sync(since: Int64 = 0) throws -> JSONValue { try json("GET", "/sync", query: "since=\(since)") }

    func messages(in conversationID: String, query: String = "") throws -> [JSONValue] {
        try #require(json("GET", "/conversations/\(conversationID)/messages", query: query)["messages"]?.arrayValue)
    }

    func socket() -> TestSocket { bed.connect(token: token) }
}

extension JSONValue {
    var type: String? { self["type"]?.stringValue }
}

extension [JSONValue] {
    /// The events of `type` (about `messageID`, when given).
    func of(_ type: String, _ messageID: String? = nil) -> [JSONValue] {
        filter { $0.type == type && (messageID == nil || $0["messageId"]?.stringValue == messageID) }
    }

    /// The deltas about `messageID`, joined.
    func streamed(_ messageID: String) -> String { of("message.delta", messageID).compactMap { $0["delta"]?.stringValue }.joined() }
}

extension DiscoClawTestbed {
    static let notFound: JSONValue = .object(["statusCode": .int(404), "error": .string("Not Found"), "message": .string("Not Found")])
}
