import CompanionWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import CompanionBridge

/// The integration guide's frames, sessions and their limits, in memory.
@Suite struct CompanionSessionTests {
    @Test func askAnswersAskResponseInTheDirectorysSession() throws {
        let bed = CompanionTestbed()
        let client = bed.connect()
        let (reply, before) = try client.request("ask", .object(["prompt": .string("question one"), "workingDirectory": .string(bed.path("app"))]))
        #expect(reply["type"] == .string("askResponse") && reply["data"]?["success"] == .bool(true) && reply["data"]?["error"] == .null)
        let response = try #require(reply["data"]?["response"])
        #expect(response["result"] == .string("echo: question one") && response["is_error"] == .bool(false) && response["duration_ms"] != nil)
        let sid = try #require(response["session_id"]?.stringValue)
        #expect(try bed.session("app") == sid, "ask made the directory's session")
        #expect(before.allSatisfy { $0["requestId"] == .null })
        let (again, _) = try client.request("ask", .object(["prompt": .string("question two"), "sessionId": .string(sid)]))
        #expect(again["data"]?["response"]?["result"] == .string("echo: question two") && again["data"]?["response"]?["session_id"] == .string(sid))
        let (empty, _) = try client.request("ask", .object(["workingDirectory": .string("app")]))
        CompanionClient.checkError(empty, "INVALID_MESSAGE")
    }

    @Test(arguments: ["prompt", "initialPrompt"])
    func streamStartAnswersStreamStartedThenThePrompt(_ field: String) throws {
        let bed = CompanionTestbed()
        let client = bed.connect()
        let (reply, before) = try client.request(
            "streamStart",
            .object(["workingDirectory": .string(bed.path("lib")), field: .string("hello stream")])
        )
        #expect(before.isEmpty && reply["type"] == .string("streamStarted"))
        let sid = try #require(reply["data"]?["sessionId"]?.stringValue)
        #expect(reply["data"]?["workingDirectory"] == .string(bed.path("lib")) && reply["data"]?["sessionName"] == .string("lib"))
        #expect(client.read().result(sid, "echo: hello stream")?["data"]?["success"] == .bool(true))
        let (again, _) = try client.request("streamStart", .object(["workingDirectory": .string(bed.path("lib"))]))
        #expect(again["type"] == .string("streamStarted") && again["data"]?["sessionId"] == .string(sid), "one session per directory")
        #expect(client.read().isEmpty)
        let continued = try bed.restJSON(
            "POST",
            "/api/sessions/continue",
            json: .object(["sessionId": .string(sid), "workingDirectory": .string(bed.path("lib"))])
        )
        #expect(continued["initialPrompt"] == (field == "initialPrompt" ? .string("hello stream") : .null))
    }

    @Test func streamSendNeedsASessionThatExists() throws {
        let bed = CompanionTestbed()
        let client = bed.connect()
        let missing = try client.expectError("streamSend", .object(["sessionId": .string("nobody"), "prompt": .string("x")]), "INVALID_SESSION")
        #expect(missing["data"]?["sessionId"] == .string("nobody"))
        let (started, _) = try client.request("streamStart", .object(["workingDirectory": .string(bed.path("tool"))]))
        let sid = try #require(started["data"]?["sessionId"]?.stringValue)
        let (status, before) = try client.request("streamSend", .object(["sessionId": .string(sid), "prompt": .string("sent along")]))
        #expect(before.isEmpty && status["type"] == .string("sessionStatus"))
        #expect(status["data"]?["sessionId"] == .string(sid) && status["data"]?["status"] == .string("processing"))
        #expect(AppDecoder.isISO(status["data"]?["lastActivity"]) && status["data"]?["messageCount"]?.intValue != nil)
        #expect(client.read().result(sid, "echo: sent along") != nil)
    }

    @Test func setWorkingDirectoryStaysInsideTheProjectsRoot() throws {
        let bed = CompanionTestbed()
        let client = bed.connect()
        let (absolute, _) = try client.request("setWorkingDirectory", .object(["workingDirectory": .string(bed.path("app"))]))
        #expect(absolute["type"] == .string("workingDirectorySet") && absolute["data"]?["success"] == .bool(true))
        #expect(absolute["data"]?["workingDirectory"] == .string(bed.path("app")))
        let (relative, _) = try client.request("setWorkingDirectory", .object(["workingDirectory": .string("lib")]))
        #expect(relative["data"]?["workingDirectory"] == .string(bed.path("lib")), "a relative directory is taken inside the root")
        for outside in ["/etc", "../", "app/../../outside", (bed.root as NSString).deletingLastPathComponent] {
            try client.expectError("setWorkingDirectory", .object(["workingDirectory": .string(outside)]), "INVALID_WORKING_DIRECTORY")
        }
        try client.expectError("streamStart", .object(["workingDirectory": .string("/etc")]), "INVALID_WORKING_DIRECTORY")
        let (started, _) = try client.request("streamStart", .object([:]))
        #expect(started["data"]?["workingDirectory"] == .string(bed.path("lib")), "a request naming no directory works in the socket's")
    }

    @Test(arguments: [
        JSONValue.object(["deviceToken": .string(String(repeating: "ab", count: 32)), "deviceInfo": .string("ios")]),
        .object(["token": .string(String(repeating: "CD", count: 32)), "platform": .string("ios")]),
    ])
    func registerDeviceAnswersDeviceRegisteredAndKeepsTheToken(_ data: JSONValue) throws {
        let bed = CompanionTestbed()
        let client = bed.connect(device: "push-device")
        let (reply, before) = try client.request("registerDevice", data)
        #expect(before.isEmpty && reply["type"] == .string("deviceRegistered"))
        #expect(reply["data"]?["success"] == .bool(true) && reply["data"]?["message"]?.stringValue != nil)
        let device = try #require(bed.bed.journal.pushDevices.first { $0.deviceID == CompanionTestbed.deviceID("push-device") })
        let target = try #require(device.targets.first)
        #expect(target.kind == .apns && target.token == target.token.lowercased() && target.token.count == 64)
        try client.expectError("registerDevice", .object(["token": .string("not-hex!"), "platform": .string("ios")]), "INVALID_MESSAGE")
    }

    @Test func oneSessionPerDirectoryAcrossEveryEntryPoint() throws {
        let bed = CompanionTestbed()
        let sid = try bed.session("app")
        let client = bed.connect()
        #expect(
            try client.request("streamStart", .object(["workingDirectory": .string(bed.path("app"))])).reply["data"]?["sessionId"] == .string(sid)
        )
        #expect(try client.request("streamStart", .object(["workingDirectory": .string("app")])).reply["data"]?["sessionId"] == .string(sid))
        #expect(try bed.restJSON("POST", "/api/stream/start", json: .object(["workingDirectory": .string("app")]))["sessionId"] == .string(sid))
        let answer = try bed.restJSON("POST", "/api/ask", json: .object(["prompt": .string("dedup"), "workingDirectory": .string(bed.path("app"))]))
        #expect(answer["session_id"] == .string(sid))
        #expect(try bed.sessionDetails().filter { $0.value["workingDirectory"] == .string(bed.path("app")) }.map(\.key) == [sid])
    }

    @Test func maxSessionsHoldsEverywhere() throws {
        var settings = CompanionSettings()
        settings.maxSessions = 2
        let bed = CompanionTestbed(settings: settings, projects: ["a", "b", "c"])
        let first = try bed.session("a")
        _ = try bed.session("b")
        let full = try bed.startProject("c", status: 429)
        #expect(full["success"] == .bool(false) && full["error"] == .string("Too many sessions"))
        #expect(full["message"] == .string("Maximum number of sessions (2) reached"))
        for key in ["sessionId", "projectName", "projectPath", "status", "startedAt"] {
            #expect(full["session"]?[key]?.stringValue != nil, "the app decodes the whole body")
        }
        #expect(try bed.session("a") == first, "an existing directory is not a new session")
        let client = bed.connect()
        let refused = try client.expectError("streamStart", .object(["workingDirectory": .string(bed.path("c"))]), "SESSION_LIMIT")
        #expect(refused["data"]?["details"] == .object(["maxSessions": .int(2)]))
        let turn = try client.command("one too many", session: "6a1e0000-0000-4000-8000-0000000000c1", path: bed.path("c"))
        #expect(turn.reply["type"] == .string("claudeResponse") && turn.reply["data"]?["success"] == .bool(false))
        #expect(try bed.rest("POST", "/api/stream/start", json: .object(["workingDirectory": .string("c")])).status == 429)
        #expect(try bed.rest("POST", "/api/ask", json: .object(["prompt": .string("x"), "workingDirectory": .string("c")])).status == 429)
    }

    @Test func projectStartFailuresKeepTheAppsKeys() throws {
        let bed = CompanionTestbed()
        for (name, status) in [("nope", 404), (".hidden", 403)] {
            let body = try bed.startProject(name, status: status)
            #expect(body["success"] == .bool(false) && body["error"]?.stringValue != nil && body["message"]?.stringValue != nil)
            for key in ["sessionId", "projectName", "projectPath", "status", "startedAt"] { #expect(body["session"]?[key]?.stringValue != nil) }
        }
        let bad = try bed.startProject("app", .object(["sessionId": .string("has space")]), status: 400)
        #expect(bad["code"] == .string("INVALID_MESSAGE"))
    }

    @Test func sessionsListGetAndDelete() throws {
        let bed = CompanionTestbed()
        let sid = try bed.session("app")
        let listing = try bed.restJSON("GET", "/api/sessions")
        #expect(listing["sessions"]?.arrayValue?.contains(.string(sid)) == true)
        let detail = try #require(try bed.sessionDetails()[sid])
        #expect(detail["workingDirectory"] == .string(bed.path("app")) && detail["live"] == .bool(true) && detail["backgrounded"] == .bool(false))
        #expect(detail["createdAt"]?.intValue != nil && detail["lastActivity"]?.intValue != nil)
        let count = try #require(detail["messageCount"]?.intValue)
        _ = try bed.restJSON("POST", "/api/stream/\(sid)", json: .object(["prompt": .string("count me")]))
        #expect((try bed.sessionDetails()[sid]?["messageCount"]?.intValue ?? 0) > count)

        let one = try bed.restJSON("GET", "/api/sessions/\(sid)")
        #expect(one["sessionId"] == .string(sid) && one["projectPath"] == .string(bed.path("app")) && one["status"] == .string("running"))
        #expect(one["stoppedAt"] == .null && one["error"] == .null && AppDecoder.isISO(one["startedAt"]))
        #expect(try bed.rest("GET", "/api/sessions/6a1e0000-0000-4000-8000-0000000000e1").status == 404)
        #expect(try bed.rest("DELETE", "/api/sessions/6a1e0000-0000-4000-8000-0000000000e1").status == 404)
        let deleted = try bed.restJSON("DELETE", "/api/sessions/\(sid)")
        #expect(deleted["success"] == .bool(true) && deleted["sessionId"] == .string(sid) && deleted["message"]?.stringValue != nil)
        #expect(try bed.sessionDetails()[sid]?["live"] == .bool(false))
        #expect(
            try bed.restJSON("GET", "/api/sessions/\(sid)")["status"] == .string("stopped"),
            "a stored session is described from its conversation"
        )
    }

    @Test func sessionsContinueEveryAnswer() throws {
        let bed = CompanionTestbed()
        let (app, lib) = (bed.path("app"), bed.path("lib"))
        let sid = try bed.session("app")
        let required: JSONValue = .object(["error": .string("sessionId and workingDirectory are required")])
        for body: JSONValue in [.object([:]), .object(["sessionId": .string(sid)]), .object(["workingDirectory": .string(app)])] {
            #expect(try bed.restJSON("POST", "/api/sessions/continue", json: body, status: 400) == required)
        }
        let missing = try bed.restJSON(
            "POST",
            "/api/sessions/continue",
            json: .object(["sessionId": .string("6a1e0000-0000-4000-8000-0000000000f1"), "workingDirectory": .string(app)]),
            status: 404
        )
        #expect(missing == .object(["error": .string("Session not found")]))
        let mismatch = try bed.restJSON(
            "POST",
            "/api/sessions/continue",
            json: .object(["sessionId": .string(sid), "workingDirectory": .string(lib)]),
            status: 400
        )
        #expect(mismatch == .object(["error": .string("Working directory mismatch"), "expected": .string(app), "provided": .string(lib)]))
        let ok = try bed.restJSON("POST", "/api/sessions/continue", json: .object(["sessionId": .string(sid), "workingDirectory": .string("app")]))
        #expect(ok["success"] == .bool(true) && ok["sessionId"] == .string(sid) && ok["workingDirectory"] == .string(app))
        #expect(ok["conversationStarted"] == .bool(false) && ok["initialPrompt"] == .null && ok["createdAt"]?.intValue != nil)
    }

    @Test func restAskAndStream() throws {
        let bed = CompanionTestbed()
        let sid = try bed.session("app")
        let answer = try bed.restJSON("POST", "/api/ask", json: .object(["prompt": .string("rest question"), "workingDirectory": .string("app")]))
        #expect(answer["type"] == .string("result") && answer["subtype"] == .string("success") && answer["is_error"] == .bool(false))
        #expect(answer["result"] == .string("echo: rest question") && answer["session_id"] == .string(sid) && answer["duration_ms"] != nil)
        #expect(try bed.rest("POST", "/api/ask", json: .object(["prompt": .string("")])).json == .object(["error": .string("Prompt is required")]))

        let started = try bed.restJSON("POST", "/api/stream/start", json: .object(["workingDirectory": .string(bed.path("lib"))]))
        #expect(started["success"] == .bool(true) && started["message"] == .string("Session ready for commands"))
        let lib = try #require(started["sessionId"]?.stringValue)
        let watcher = bed.connect(device: "stream-watcher")
        try watcher.subscribe(lib)
        #expect(
            try bed.restJSON("POST", "/api/stream/start", json: .object(["prompt": .string("hello lib"), "workingDirectory": .string("lib")]))[
                "sessionId"
            ] == .string(lib)
        )
        #expect(watcher.read().result(lib, "echo: hello lib") != nil)

        let sent = try bed.restJSON("POST", "/api/stream/\(lib)", json: .object(["prompt": .string("more")]))
        #expect(sent["sessionId"] == .string(lib) && sent["success"] == .bool(true) && sent["response"]?["result"] == .string("echo: more"))
        #expect(watcher.read().result(lib, "echo: more") != nil)
        #expect(try bed.rest("POST", "/api/stream/6a1e0000-0000-4000-8000-0000000000a1", json: .object(["prompt": .string("x")])).status == 404)
        let closed = try bed.restJSON("DELETE", "/api/stream/\(lib)")
        #expect(closed["success"] == .bool(true) && closed["message"] == .string("Session closed"))
        let gone = try bed.restJSON("DELETE", "/api/stream/6a1e0000-0000-4000-8000-0000000000a1")
        #expect(gone == .object(["success": .bool(false), "message": .string("Session not found")]))
    }

    @Test func aRestCallWaitsForItsTurnAndHearsAFailure() throws {
        let backend = ScriptedBackend()
        let bed = CompanionTestbed(backends: [backend])
        let sid = try bed.session("app")
        let waiting = bed.harness.request(
            "POST",
            "/api/stream/\(sid)",
            headers: .init(authorization: "Bearer " + CompanionTestbed.token),
            body: Array(#"{"prompt":"slow"}"#.utf8)
        )
        #expect(waiting == nil && bed.downstream.waitingRequests == 1, "no answer before the turn ends")
        try #require(backend.runs.first).emit(.failed("boom"))
        bed.bed.settle()
        #expect(bed.downstream.waitingRequests == 0)
    }

    @Test func idleSessionsCloseFreeTheirSlotAndCanBeContinued() throws {
        var settings = CompanionSettings()
        settings.maxSessions = 2
        settings.idleSeconds = 1
        let bed = CompanionTestbed(settings: settings, projects: ["a", "b", "c"])
        let first = try bed.session("a")
        _ = try bed.session("b")
        _ = try bed.startProject("c", status: 429)
        bed.bed.advance(millis: 1_500)
        #expect(try bed.sessionDetails()[first]?["live"] == .bool(false), "a closed session's history stays")
        _ = try bed.session("c")
        let turn = try bed.connect().command("back again", session: first, path: bed.path("a"))
        #expect(turn.reply["data"]?["content"] == .string("echo: back again") && turn.reply["data"]?["sessionId"] == .string(first))
        #expect(try bed.sessionDetails()[first]?["live"] == .bool(true))
    }

    @Test func commandsWaitBehindTheRunningOneUpToMaxQueuedCommands() throws {
        var settings = CompanionSettings()
        settings.maxQueuedCommands = 1
        let backend = ScriptedBackend()
        let bed = CompanionTestbed(settings: settings, backends: [backend])
        let client = bed.connect()
        let (started, _) = try client.request("streamStart", .object(["workingDirectory": .string("app")]))
        let sid = try #require(started["data"]?["sessionId"]?.stringValue)
        let ids = ["one", "two", "three"].map { client.send("streamSend", .object(["sessionId": .string(sid), "prompt": .string($0)])) }
        let command = client.send("claudeCommand", .object(["command": .string("four"), "sessionId": .string(sid)]))
        let frames = client.read()
        let replies = { (id: String?) in frames.filter { $0["requestId"]?.stringValue == id } }
        #expect(replies(ids[0]).of("sessionStatus").count == 1 && replies(ids[1]).of("sessionStatus").count == 1)
        let refused = try #require(replies(ids[2]).of("error").first)
        CompanionClient.checkError(refused, "QUEUE_FULL")
        let full = try #require(replies(command).first)
        #expect(full["type"] == .string("claudeResponse") && full["data"]?["success"] == .bool(false))
        #expect(full["data"]?["error"] == .string("too many commands are waiting in this session (at most 1)"))
        #expect(backend.runs.map(\.request.text) == ["one"], "the second waits behind the running one")
        backend.runs[0].emit(.final("echo: one"))
        bed.bed.settle()
        #expect(backend.runs.map(\.request.text) == ["one", "two"], "waiting commands run in order")
        backend.runs[1].emit(.final("echo: two"))
        bed.bed.settle()
        #expect(client.read().of("conversationResult").compactMap { $0["data"]?["result"]?.stringValue } == ["echo: one", "echo: two"])
    }

    @Test(arguments: ["bare", "sessionBackgrounded"])
    func aBackgroundedSessionGetsTheLongerIdleTime(_ how: String) throws {
        var settings = CompanionSettings()
        settings.idleSeconds = 1
        settings.backgroundIdleSeconds = 300
        let bed = CompanionTestbed(settings: settings, projects: ["a", "b"])
        let kept = try bed.session("a")
        let idle = try bed.session("b")
        let client = bed.connect(device: "bg")
        try client.subscribe(kept)
        if how == "bare" { client.background(kept) } else { client.send("sessionBackgrounded", .object(["sessionId": .string(kept)])) }
        #expect(try bed.sessionDetails()[kept]?["backgrounded"] == .bool(true))
        bed.bed.advance(millis: 1_500)
        let details = try bed.sessionDetails()
        #expect(details[idle]?["live"] == .bool(false) && details[kept]?["live"] == .bool(true) && details[kept]?["backgrounded"] == .bool(true))
        client.send("sessionForegrounded", .object(["sessionId": .string(kept)]))
        #expect(try bed.sessionDetails()[kept]?["backgrounded"] == .bool(false))
    }
}
