import CompanionWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import CompanionBridge

/// The listener in memory: auth, welcome, ping, subscribe, errors and the plain REST calls.
@Suite struct CompanionConnectionTests {
    static let invalidToken: JSONValue = .object(["error": .string("Invalid token"), "message": .string("The provided auth token is not valid")])
    static let missingToken: JSONValue = .object([
        "error": .string("Authentication required"), "message": .string("Please provide a valid auth token"),
    ])

    @Test func theWelcomeTheAppWaitsForAndOneClientIDPerSocket() throws {
        var settings = CompanionSettings()
        settings.maxSessions = 3
        let bed = CompanionTestbed(settings: settings)
        let client = bed.connect()
        let welcome = try #require(client.welcome)
        #expect(welcome["requestId"] == .null)
        #expect(welcome["timestamp"]?.stringValue?.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression) != nil)
        let data = try #require(welcome["data"])
        #expect(data["clientId"]?.stringValue?.isEmpty == false && data["serverVersion"] == .string("1.0.0") && data["claudeCodeVersion"] == .null)
        #expect(data["capabilities"]?.arrayValue?.count == 5 && data["maxSessions"] == .int(3))
        #expect(bed.connect().welcome?["data"]?["clientId"] != data["clientId"], "every socket gets its own clientId")
    }

    @Test func aBearerHeaderWithADeviceIDWorks() {
        let bed = CompanionTestbed()
        let client = bed.connect(device: "bearer-device-1", bearer: true)
        #expect(client.welcome?["type"] == .string("welcome"))
        #expect(client.isOpen)
        #expect(bed.bed.journal.devices[CompanionTestbed.deviceID("bearer-device-1")] != nil)
    }

    @Test(arguments: ["wrong query", "missing", "wrong bearer", "token prefix"])
    func aBadOrMissingTokenGetsNothingThenClose1008(_ token: String) {
        let bed = CompanionTestbed()
        let client =
            switch token {
            case "wrong query": bed.connect(token: String(repeating: "x", count: 32))
            case "missing": bed.connect(token: nil)
            case "wrong bearer": bed.connect(token: String(repeating: "y", count: 32), bearer: true)
            default: bed.connect(token: String(CompanionTestbed.token.dropLast()))
            }
        #expect(client.welcome == nil && client.frames.isEmpty, "a socket with a bad token gets nothing")
        #expect(client.socket.closeFrame?.code == 1008 && client.socket.closeFrame?.reason == "Authentication required")
        #expect(bed.downstream.connectionCount == 0 && bed.bed.journal.devices.isEmpty)
    }

    @Test(arguments: ["missing", "wrong bearer", "wrong query"])
    func restWithoutAValidTokenIs401WithTheServersBody(_ token: String) throws {
        let bed = CompanionTestbed()
        for (method, path) in [("GET", "/api/projects"), ("GET", "/api/sessions"), ("POST", "/api/stream/start")] {
            let response =
                switch token {
                case "missing": try bed.rest(method, path, token: nil)
                case "wrong bearer": try bed.rest(method, path, token: String(repeating: "z", count: 32))
                default: try bed.rest(method, path, token: String(repeating: "z", count: 32), query: true)
                }
            #expect(response.status == 401, "\(method) \(path)")
            #expect(response.json == (token == "missing" ? Self.missingToken : Self.invalidToken), "\(response.text)")
        }
    }

    @Test func aRevokedDeviceIsClosedAndRefusedUntilAllowedThenComesBack() throws {
        let bed = CompanionTestbed()
        let live = bed.connect(device: "phone")
        #expect(live.welcome != nil)
        let deviceID = CompanionTestbed.deviceID("phone")
        var outcome: String?
        bed.bed.hub.devices.revoke(deviceID) { outcome = $0 }
        bed.bed.settle()
        #expect(outcome == "revoked" && live.socket.closeFrame?.code == 1008 && live.socket.closeFrame?.reason == "Device revoked")
        let refused = bed.connect(device: "phone")
        #expect(refused.welcome == nil && refused.socket.closeFrame?.reason == "Device revoked")
        let rest = try bed.rest("GET", "/api/projects", device: "phone")
        #expect(rest.status == 403 && rest.json?["error"] == .string("Device revoked"))
        #expect(rest.json?["message"] == .string("this device was revoked: run clawrelay devices allow \(deviceID) on the relay"))
        #expect(bed.connect(device: "tablet").welcome != nil, "other devices are not touched")

        // `clawrelay devices allow`: the record becomes unpaired and the relay re-reads it.
        bed.bed.hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) {
            $0.device?.status = .unpaired
        } completion: { _ in
        }
        bed.bed.settle()
        bed.bed.hub.devices.refresh(deviceID)
        bed.bed.settle()
        #expect(bed.connect(device: "phone").welcome != nil && bed.bed.journal.devices[deviceID]?.status == .approved)
        #expect(try bed.rest("GET", "/api/projects", device: "phone").status == 200)
    }

    @Test func restTakesTheTokenAsBearerOrInTheQueryAndHealthNeedsNone() throws {
        let bed = CompanionTestbed()
        #expect(try bed.rest("GET", "/api/projects").status == 200)
        #expect(try bed.rest("GET", "/api/projects", query: true).status == 200)
        let health = try #require(try bed.rest("GET", "/health", token: nil).json)
        #expect(health["status"] == .string("healthy") && health["version"] == .string("1.0.0") && health["sessions"] == .int(0))
        #expect(AppDecoder.isISO(health["timestamp"]))
        #expect(try bed.rest("GET", "/ws", token: nil).status == 426, "plain HTTP to the WebSocket path")
        #expect(try bed.rest("GET", "/nowhere").status == 404)
        #expect(try bed.rest("GET", "/api/nowhere").status == 404)
    }

    @Test func pingAnswersPongWithTheRequestIDAndTheClientsTimestamp() throws {
        let bed = CompanionTestbed()
        let client = bed.connect()
        let (pong, before) = try client.request("ping")
        #expect(before.isEmpty && pong["type"] == .string("pong") && AppDecoder.isISO(pong["data"]?["serverTime"]))
        #expect(pong["data"]?["clientTimestamp"] == nil, "no client timestamp sent, none echoed")
        let (echoed, _) = try client.request("ping", .object(["timestamp": .string("2026-01-02T03:04:05Z")]))
        #expect(echoed["data"]?["clientTimestamp"] == .string("2026-01-02T03:04:05Z"))
    }

    @Test func subscribeAnswersSubscribedAndSessionIDsAreOptional() throws {
        let bed = CompanionTestbed()
        let client = bed.connect()
        let events = ["streamData", "streamComplete", "toolUse", "toolResult", "assistantMessage"]
        let (reply, before) = try client.subscribe("9b1f0000-0000-4000-8000-000000000001", events: events)
        #expect(before.isEmpty)
        #expect(reply["data"]?["events"] == .array(events.map(JSONValue.string)))
        #expect(reply["data"]?["sessionIds"] == .array([.string("9b1f0000-0000-4000-8000-000000000001")]) && reply["data"]?["success"] == .bool(true))
        let (bare, _) = try client.request("subscribe", .object(["events": .array([.string("assistantMessage")])]))
        #expect(bare["type"] == .string("subscribed") && bare["data"]?["sessionIds"] == .array([]))
    }

    @Test(arguments: ["sendCommand", "totallyUnknown"])
    func anUnknownTypeIsAnErrorAndTheSocketStaysOpen(_ type: String) throws {
        let client = CompanionTestbed().connect()
        let reply = try client.expectError(type, .object(["command": .string("x")]), "UNKNOWN_MESSAGE_TYPE")
        #expect(reply["requestId"]?.stringValue != nil)
        #expect(client.isOpen)
    }

    @Test func malformedFramesAreInvalidMessagesAndTheSocketStaysOpen() throws {
        let client = CompanionTestbed().connect()
        for text in ["{this is not json", #"{"requestId":"NO-TYPE-1","data":{}}"#, #"{"type":42,"data":{}}"#] {
            client.sendRaw(text)
            let error = try #require(client.read().first)
            CompanionClient.checkError(error, "INVALID_MESSAGE")
            #expect(error["requestId"] == .null)
        }
        let reply = try client.expectError("subscribe", .object(["events": .string("assistantMessage")]), "INVALID_MESSAGE")
        #expect(reply["requestId"]?.stringValue != nil)
        #expect(client.isOpen)
    }

    @Test func aMalformedClaudeCommandStillGetsAClaudeResponse() throws {
        let bed = CompanionTestbed()
        let client = bed.connect()
        let (reply, _) = try client.request("claudeCommand", .object(["command": .int(7), "projectPath": .string(bed.path("app"))]))
        #expect(reply["type"] == .string("claudeResponse"), "the first frame with the command's requestId")
        #expect(reply["data"]?["success"] == .bool(false) && reply["data"]?["content"] == .string(""))
        #expect(reply["data"]?["error"] == .string("command must be a string"))
        #expect(client.isOpen)
    }

    @Test func permissionWithoutAPendingRequest() throws {
        let client = CompanionTestbed().connect()
        let reply = try client.expectError("permission", .object(["sessionId": .string("s1"), "response": .string("y")]), "NO_PENDING_PERMISSION")
        #expect(reply["data"]?["sessionId"] == .string("s1"))
    }

    @Test func presenceFramesAndStreamCloseGetNoAnswer() {
        let bed = CompanionTestbed()
        let client = bed.connect(device: "quiet-device")
        client.background("s1")
        client.background("")
        client.send("client_backgrounding", .object(["sessionId": .string("s1")]))
        client.send("sessionBackgrounded", .object(["sessionId": .string("s1")]))
        client.send("sessionForegrounded", .object(["sessionId": .string("s1")]))
        client.send("streamClose", .object(["sessionId": .string("s1"), "reason": .string("user_requested")]))
        #expect(client.read().isEmpty)
        #expect(client.isOpen)
    }

    @Test func projectsAreTheNonHiddenSubfoldersOfTheRoot() throws {
        let bed = CompanionTestbed(projects: ["app", "lib"])
        let listing = try bed.restJSON("GET", "/api/projects")
        #expect(listing["basePath"] == .string(bed.root))
        let projects = try #require(listing["projects"]?.arrayValue)
        #expect(projects.compactMap { $0["name"]?.stringValue } == ["app", "lib"], "hidden folders and files are skipped")
        #expect(projects.allSatisfy { $0["type"] == .string("folder") && $0["path"]?.stringValue == bed.path($0["name"]?.stringValue ?? "") })
    }

    @Test func restBodiesAreBoundedAndMustBeJSONObjects() throws {
        var settings = CompanionSettings()
        settings.maxFrameBytes = 4096
        let bed = CompanionTestbed(settings: settings)
        let big = try bed.rest(
            "POST",
            "/api/ask",
            json: .object(["prompt": .string(String(repeating: "x", count: 8000)), "workingDirectory": .string("app")])
        )
        #expect(big.status == 413 && big.json?["error"] == .string("Payload too large"))
        let broken = try bed.rest("POST", "/api/sessions/continue", raw: Array("{not json".utf8))
        #expect(broken.status == 400 && broken.json?["error"] == .string("Invalid JSON"))
        let list = try bed.rest("POST", "/api/sessions/continue", raw: Array("[1]".utf8))
        #expect(list.status == 400)
        let blank = try bed.rest("POST", "/api/sessions/continue", raw: Array("  \n".utf8))
        #expect(blank.status == 400 && blank.json?["error"] == .string("sessionId and workingDirectory are required"), "a blank body is {}")
    }
}
