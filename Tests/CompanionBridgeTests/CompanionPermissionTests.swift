import CompanionWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import CompanionBridge

/// The app's `PermissionRequestData` (Message.swift at f006a15): a `permissionRequest`'s data
/// must decode into it, every field required, or the app drops the frame.
struct AppPermissionRequest: Decodable, Equatable {
    let sessionId: String
    let prompt: String
    let options: [String]
    let defaultOption: String
    let timeout: TimeInterval

    init(_ frame: JSONValue) throws {
        #expect(frame["type"] == .string("permissionRequest") && frame["requestId"] == .null, "a broadcast, never a command's reply: \(frame)")
        let data = try #require(frame["data"]?.encoded())
        self = try JSONDecoder().decode(Self.self, from: Data(data.utf8))
    }
}

/// A Companion session with a command running whose backend waits for an approval.
struct PermissionFixture {
    let bed: CompanionTestbed
    let backend: ScriptedBackend
    let sid: String
    /// The app, subscribed to the session; it sent the command.
    let app: CompanionClient
    let commandID: String

    /// `devices`: the x-device-id of the app's socket (nil: none, as the app connects).
    init(device: String? = "ann") throws {
        backend = ScriptedBackend()
        bed = CompanionTestbed(backends: [backend])
        sid = try bed.session("app")
        app = bed.connect(device: device)
        try app.subscribe(sid)
        commandID = try #require(app.send("claudeCommand", .object(["command": .string("make x"), "sessionId": .string(sid)])))
        bed.bed.settle()
    }

    var run: ScriptedBackend.Run { backend.runs[0] }

    /// The backend asks whether Bash may run `command` (a millisecond after what came before, so
    /// "oldest first" is well defined).
    func ask(_ command: String = "touch x", request: String = "req-1", timeoutMillis: Int = 600_000, run index: Int = 0) {
        let ask = ApprovalAsk(
            requestID: request,
            agent: "Claude Code",
            toolName: "Bash",
            summary: command,
            input: .object(["command": .string(command)]),
            directory: bed.path("app"),
            timeoutMillis: timeoutMillis
        )
        bed.bed.advance(millis: 1)
        backend.runs[index].emit(.approval(ask))
        bed.bed.settle()
    }

    var pending: [Approval] { bed.bed.hub.approvals.pending(userID: bed.settings.userID) }

    /// `POST /api/permission/:sessionId` as `device`.
    func post(_ body: JSONValue, device: String = "laptop") throws -> TestResponse {
        let response = try bed.rest("POST", "/api/permission/\(sid)", json: body, device: device)
        bed.bed.settle()
        return response
    }

    /// The app's answer, as it sends it; returns the frame carrying its request id.
    func answer(_ client: CompanionClient, _ response: String, remember: Bool = false, session: String? = nil) throws -> JSONValue {
        let data: JSONValue = .object(["sessionId": .string(session ?? sid), "response": .string(response), "remember": .bool(remember)])
        let id = client.send("permission", data)
        bed.bed.settle()
        return try client.reply(to: id).reply
    }
}

@Suite struct CompanionPermissionTests {
    @Test func aQuestionIsTheAppsOwnAlertAndItsNoteIsNoAnswer() throws {
        let fixture = try PermissionFixture()
        fixture.ask()
        let approval = try #require(fixture.pending.first)
        let frames = fixture.app.read()
        let prompt = try AppPermissionRequest(try #require(frames.of("permissionRequest").first))
        #expect(prompt.sessionId == fixture.sid && prompt.options == ["Allow once", "Always allow", "Deny"] && prompt.defaultOption == "Deny")
        #expect(prompt.prompt == "Claude Code wants to run Bash in app: touch x (\(approval.shortID))" && prompt.timeout == 600)
        #expect(frames.of("permissionRequest").first?["data"]?["approvalId"] == .string(approval.shortID))
        let note = try #require(frames.of("assistantMessage").first?["data"])
        #expect(note["type"] == .string("relay_note") && note["content"]?.arrayValue?.first?["text"]?.stringValue?.contains("/approve") == true)
        #expect(frames.allSatisfy { $0["requestId"] == .null }, "nothing carries the command's requestId before its answer")
        #expect(frames.of("streamChunk").isEmpty && frames.of("conversationResult").isEmpty, "a note is not the run's result")
        fixture.bed.bed.advance(millis: 100_500)
        let again = fixture.bed.connect(device: "ann")
        let (_, missed) = try again.subscribe(fixture.sid)
        #expect(missed.isEmpty)
        let resent = try AppPermissionRequest(try #require(again.read().of("permissionRequest").first))
        #expect(resent.prompt == prompt.prompt && resent.timeout == 500, "a reconnecting app is asked again, with the time left")
    }

    @Test(arguments: [
        ("Allow once", false, ApprovalAnswer.allow(always: false)), ("Always allow", false, .allow(always: true)),
        ("y", true, .allow(always: true)), ("Deny", false, .deny(message: "Denied by ann from companion")),
        (" no. ", false, .deny(message: "Denied by ann from companion")),
    ])
    func theAppsAnswerDecides(response: String, remember: Bool, expected: ApprovalAnswer) throws {
        let fixture = try PermissionFixture()
        fixture.ask()
        let approval = try #require(fixture.pending.first)
        _ = fixture.app.read()
        let reply = try fixture.answer(fixture.app, response, remember: remember)
        #expect(fixture.run.answers.map(\.answer) == [expected] && fixture.run.answers.map(\.requestID) == ["req-1"])
        #expect(reply["type"] == .string("permission") && reply["data"]?["success"] == .bool(true))
        #expect(reply["data"]?["accepted"] == .bool(expected != .deny(message: "Denied by ann from companion")))
        #expect(reply["data"]?["approvalId"] == .string(approval.shortID) && reply["data"]?["sessionId"] == .string(fixture.sid))
        let resolved = fixture.app.frames.of("progress").last?["data"]
        #expect(resolved?["stage"] == .string("permission_resolved") && resolved?["message"]?.stringValue?.contains("by ann from companion") == true)
        #expect(fixture.pending.isEmpty)
        fixture.run.emit(.final("made x"))
        fixture.bed.bed.settle()
        let (answer, _) = try fixture.app.reply(to: fixture.commandID)
        #expect(answer["type"] == .string("claudeResponse") && answer["data"]?["content"] == .string("made x"), "the command's reply is its answer")
    }

    @Test func theFirstAnswerWinsAcrossTwoDevices() throws {
        let fixture = try PermissionFixture()
        let tablet = fixture.bed.connect(device: "tablet")
        try tablet.subscribe(fixture.sid)
        fixture.ask()
        #expect(fixture.app.read().of("permissionRequest").count == 1 && tablet.read().of("permissionRequest").count == 1)
        let first = try fixture.answer(tablet, "Always allow")
        #expect(first["data"]?["decision"] == .string("allow-always"))
        let late = try fixture.answer(fixture.app, "Deny")
        CompanionClient.checkError(late, "NO_PENDING_PERMISSION")
        let message = late["data"]?["message"]?.stringValue ?? ""
        #expect(message.contains("already answered: always allowed (for this session) by tablet from companion"), "\(message)")
        #expect(fixture.run.answers.map(\.answer) == [.allow(always: true)])
    }

    @Test func aPromptAnsweredElsewhereStaysUntilTheAppTapsThenTheNextOneComes() throws {
        let fixture = try PermissionFixture()
        fixture.ask("touch a", request: "r1")
        fixture.ask("touch b", request: "r2")
        let pending = fixture.pending
        let shown = try AppPermissionRequest(try #require(fixture.app.read().of("permissionRequest").only))
        #expect(shown.prompt.contains("touch a"), "one prompt at a time, the oldest first")
        var decided: Result<Approval, ApprovalRefusal>?
        fixture.bed.bed.hub.approvals.decide(pending[0].shortID, userID: fixture.bed.settings.userID, decision: .deny, deviceID: "elsewhere") {
            decided = $0
        }
        fixture.bed.bed.settle()
        #expect(try decided?.get().id == pending[0].id)
        let heard = fixture.app.read()
        #expect(heard.of("progress").first?["data"]?["message"] == .string("Bash touch a: denied by elsewhere from unknown (\(pending[0].shortID))"))
        #expect(heard.of("permissionRequest").isEmpty, "the app cannot take its alert down: no other prompt replaces it under the user's finger")
        // The app answers with the session it has open, whichever prompt it shows.
        let late = try fixture.answer(fixture.app, "Allow once", session: "another-session")
        CompanionClient.checkError(late, "NO_PENDING_PERMISSION")
        #expect(fixture.run.answers.map(\.requestID) == ["r1"], "the tap on the stale prompt decided nothing")
        let next = try AppPermissionRequest(try #require(fixture.app.read().of("permissionRequest").only))
        #expect(next.prompt.contains("touch b"))
        let taken = try fixture.answer(fixture.app, "Allow once", session: "another-session")
        #expect(taken["data"]?["approvalId"] == .string(pending[1].shortID))
        #expect(fixture.run.answers.map(\.requestID) == ["r1", "r2"] && fixture.run.answers.last?.answer == .allow(always: false))
    }

    @Test func anAppBackFromTheBackgroundIsAskedWhatWaitsAndItsStaleTapDecidesNothing() throws {
        let fixture = try PermissionFixture()
        fixture.ask("touch a", request: "r1")
        #expect(fixture.app.read().of("permissionRequest").count == 1)
        fixture.app.background(fixture.sid)
        fixture.bed.bed.settle()
        let first = try #require(fixture.pending.first)
        fixture.bed.bed.hub.approvals.decide(first.id, userID: fixture.bed.settings.userID, decision: .allowOnce, deviceID: "elsewhere") { _ in }
        fixture.ask("touch b", request: "r2")
        #expect(fixture.app.read().isEmpty, "nothing live reaches an app in the background")
        // Back in the app, the person taps the alert it still shows (touch a).
        let late = try fixture.answer(fixture.app, "Allow once")
        CompanionClient.checkError(late, "NO_PENDING_PERMISSION")
        #expect(fixture.run.answers.map(\.requestID) == ["r1"], "the tap was for touch a: it decided nothing")
        let shown = fixture.app.frames.of("permissionRequest")
        #expect(shown.count == 2, "touch a, then touch b once")
        #expect(try AppPermissionRequest(try #require(shown.last)).prompt.contains("touch b"), "what waits is shown")
        #expect(fixture.pending.map(\.requestID) == ["r2"])
    }

    @Test func anAnswerWithNothingPendingOrAnUnknownResponseIsRefused() throws {
        let fixture = try PermissionFixture()
        CompanionClient.checkError(try fixture.answer(fixture.app, "Allow once"), "NO_PENDING_PERMISSION")
        fixture.ask()
        _ = fixture.app.read()
        let unknown = try fixture.answer(fixture.app, "sounds good")
        CompanionClient.checkError(unknown, "INVALID_MESSAGE")
        let long = try fixture.answer(fixture.app, String(repeating: "y", count: PermissionChoice.maxResponseBytes + 1))
        CompanionClient.checkError(long, "INVALID_MESSAGE")
        #expect(fixture.run.answers.isEmpty && fixture.pending.count == 1)
    }

    @Test func theServersPermissionRouteAnswersTheSessionsOldestQuestion() throws {
        let fixture = try PermissionFixture()
        let none = try fixture.post(.object(["response": .string("y")]))
        #expect(none.status == 409 && none.json?["code"] == .string("NO_PENDING_PERMISSION"))
        fixture.ask("touch a", request: "r1")
        fixture.ask("touch b", request: "r2")
        let missing = try fixture.post(.object([:]))
        #expect(missing.status == 400 && missing.json?["error"] == .string("response is required"))
        #expect(try fixture.post(.object(["response": .string("perhaps")])).status == 400)
        let body = try #require(try fixture.post(.object(["response": .string("Always allow")])).json)
        #expect(body["success"] == .bool(true) && body["accepted"] == .bool(true) && body["decision"] == .string("allow-always"))
        #expect(fixture.run.answers.map(\.requestID) == ["r1"] && fixture.run.answers.map(\.answer) == [.allow(always: true)])
        let resolved = fixture.bed.bed.journal.approvals.values.compactMap(\.resolution)
        #expect(resolved.map(\.by.name) == ["laptop"] && resolved.map(\.by.protocolName) == ["companion"], "decided by the bearer's device")
        let denied = try #require(try fixture.post(.object(["response": .string("n")])).json)
        #expect(denied["accepted"] == .bool(false) && fixture.run.answers.last?.answer == .deny(message: "Denied by laptop from companion"))
    }
}

extension Array {
    /// The one element, or nil when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
