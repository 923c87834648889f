import CompanionWire
import Foundation
import RelayCore
import Testing

@testable import CompanionBridge

/// One socket's protocol as a value: inputs in, effects out, no socket and no core.
@Suite final class CompanionSocketMachineTests {
    let root = NSTemporaryDirectory() + "companion-machine-" + UUID().uuidString

    init() throws {
        for name in ["app", "lib"] { try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true) }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    var projects: CompanionProjects { CompanionProjects(root: root) }

    func open(held: Set<String> = []) -> CompanionSocketMachine {
        var machine = CompanionSocketMachine(deviceID: "companion:phone", clientID: "c-1", maxSessions: 10, projects: projects, held: held)
        _ = machine.opened(authorized: true, now: 0)
        return machine
    }

    func receive(_ machine: inout CompanionSocketMachine, _ text: String, background: Bool = false) -> [CompanionSocketMachine.Effect] {
        machine.received(Array(text.utf8), now: 1_000, deviceInBackground: background)
    }

    /// The frames among the effects, parsed.
    func sent(_ effects: [CompanionSocketMachine.Effect]) -> [JSONValue] {
        effects.compactMap { effect in if case .send(let text) = effect { JSONValue.parse(text) } else { nil } }
    }

    func turn(_ effects: [CompanionSocketMachine.Effect]) -> CompanionTurnRequest? {
        for case .turn(let turn) in effects { return turn }
        return nil
    }

    @Test func aSocketWithoutTheTokenIsClosedAndHeardNoMore() {
        var machine = CompanionSocketMachine(deviceID: "d", clientID: "c", maxSessions: 10, projects: projects)
        #expect(machine.opened(authorized: false, now: 0) == [.close(.authenticationRequired)])
        #expect(machine.phase == .closed)
        #expect(receive(&machine, #"{"type":"ping"}"#).isEmpty)
        #expect(machine.closed().isEmpty, "never attached: nothing to detach")
    }

    @Test func anAuthorizedSocketIsWelcomedThenAttached() throws {
        var machine = CompanionSocketMachine(deviceID: "d", clientID: "c-1", maxSessions: 7, projects: projects)
        let effects = machine.opened(authorized: true, now: 0)
        #expect(effects.count == 3 && effects.first == .admit && effects.last == .attach, "the welcome goes out before queued events can")
        let welcome = try #require(sent(effects).first)
        #expect(welcome["type"] == .string("welcome") && welcome["data"]?["clientId"] == .string("c-1") && welcome["data"]?["maxSessions"] == .int(7))
        #expect(machine.phase == .open && machine.opened(authorized: true, now: 0).isEmpty)
    }

    @Test func closingDetachesWithTheHeldSessions() {
        var machine = open(held: ["cv_1"])
        machine.hold("cv_2")
        machine.release("cv_1")
        #expect(machine.closed() == [.detach(held: ["cv_2"])])
        #expect(machine.closed().isEmpty && receive(&machine, #"{"type":"ping"}"#).isEmpty)
    }

    @Test func anyFrameButABackgroundSignalBringsABackgroundDeviceBack() {
        var machine = open(held: ["cv_1"])
        #expect(receive(&machine, #"{"type":"ping","requestId":"p"}"#, background: true).first == .foreground(held: ["cv_1"]))
        #expect(receive(&machine, "not json", background: true).count == 1, "a frame that is not one says nothing")
        let backgrounding = receive(&machine, #"{"type":"client_backgrounding","sessionId":"s"}"#, background: true)
        #expect(backgrounding == [.presence(SessionPresence(backgrounded: true, sessionId: "s"))])
        #expect(
            receive(&machine, #"{"type":"sessionBackgrounded","data":{}}"#, background: true) == [
                .presence(SessionPresence(backgrounded: true, sessionId: nil))
            ]
        )
        #expect(receive(&machine, #"{"type":"ping"}"#, background: false).count == 1, "a foreground device is not signalled")
    }

    @Test func commandsAskAndStreamsBecomeTurnsWithTheirOrigin() throws {
        var machine = open()
        let command = try #require(
            turn(receive(&machine, #"{"type":"claudeCommand","requestId":"R","data":{"command":"hi","projectPath":"/p","sessionId":"s"}}"#))
        )
        #expect(command.kind == .command(requestID: "R") && command.clientID == "cmd:R" && command.text == "hi")
        #expect(
            command.sessionID == "s" && command.directory == "/p" && command.fallbackDirectory == nil && command.origin == .command(requestID: "R")
        )
        let ask = try #require(turn(receive(&machine, #"{"type":"ask","requestId":"A","data":{"prompt":"q"}}"#)))
        #expect(ask.kind == .ask(requestID: "A") && ask.clientID == "ask:A")
        let start = try #require(turn(receive(&machine, #"{"type":"streamStart","requestId":"S","data":{"initialPrompt":"go"}}"#)))
        #expect(start.kind == .streamStart(requestID: "S", initialPrompt: "go") && start.clientID == "stream:S" && start.text == "go")
        let anonymous = try #require(turn(receive(&machine, #"{"type":"streamSend","data":{"sessionId":"s","prompt":"p"}}"#)))
        #expect(anonymous.kind == .streamSend(requestID: nil) && anonymous.clientID.hasPrefix("stream:") && anonymous.clientID.count > 7)
        let unnamed = try #require(turn(receive(&machine, #"{"type":"claudeCommand","data":{"command":"hi"}}"#)))
        guard case .command(let generated) = unnamed.kind else {
            Issue.record("\(unnamed.kind)")
            return
        }
        #expect(Identifiers.isUUIDv4(generated) && unnamed.clientID == "cmd:" + generated, "a command without an id still gets its reply")
    }

    @Test func theWorkingDirectoryIsTheSocketsFallback() throws {
        var machine = open()
        let reply = try #require(sent(receive(&machine, #"{"type":"setWorkingDirectory","requestId":"W","data":{"workingDirectory":"lib"}}"#)).first)
        #expect(reply["type"] == .string("workingDirectorySet") && reply["requestId"] == .string("W"))
        #expect(machine.workingDirectory == projects.root + "/lib")
        let refused = try #require(sent(receive(&machine, #"{"type":"setWorkingDirectory","data":{"workingDirectory":"/etc"}}"#)).first)
        #expect(refused["data"]?["code"] == .string("INVALID_WORKING_DIRECTORY") && machine.workingDirectory == projects.root + "/lib")
        let command = try #require(turn(receive(&machine, #"{"type":"claudeCommand","requestId":"R","data":{"command":"hi"}}"#)))
        #expect(command.fallbackDirectory == projects.root + "/lib")
    }

    @Test func aBadClaudeCommandIsAnsweredAsOne() throws {
        var machine = open()
        let effects = receive(&machine, #"{"type":"claudeCommand","requestId":"R","data":{"command":"","sessionId":"s","projectPath":5}}"#)
        let reply = try #require(sent(effects).first)
        #expect(effects.count == 1 && reply["type"] == .string("claudeResponse") && reply["requestId"] == .string("R"))
        #expect(
            reply["data"]
                == .object(["content": .string(""), "success": .bool(false), "sessionId": .string("s"), "error": .string("command is required")])
        )
    }

    @Test func requestsAnsweredByTheMachineAlone() throws {
        var machine = open()
        let pong = try #require(sent(receive(&machine, #"{"type":"ping","requestId":"P","data":{"timestamp":5}}"#)).first)
        #expect(pong["type"] == .string("pong") && pong["requestId"] == .string("P") && pong["data"]?["clientTimestamp"] == .int(5))
        #expect(pong["data"]?["serverTime"] == .string("1970-01-01T00:00:01.000Z"))
        let permission = try #require(sent(receive(&machine, #"{"type":"permission","requestId":"Q","data":{"sessionId":"s"}}"#)).first)
        #expect(permission["data"]?["code"] == .string("INVALID_MESSAGE") && permission["data"]?["message"] == .string("response is required"))
        let maybe = try #require(sent(receive(&machine, #"{"type":"permission","requestId":"Q","data":{"sessionId":"s","response":"maybe"}}"#)).first)
        #expect(maybe["error"]?["message"] == .string("response must be one of Allow once, Always allow, Deny (or y, n)"))
        let tapped = receive(&machine, #"{"type":"permission","requestId":"T","data":{"sessionId":"s","response":"Deny","remember":false}}"#)
        #expect(tapped == [.permission(PermissionAnswer(sessionId: "s", response: "Deny"), choice: .deny, shown: nil, requestID: "T")])
        let unknown = try #require(sent(receive(&machine, #"{"type":"sendCommand","requestId":"U"}"#)).first)
        #expect(unknown["data"]?["code"] == .string("UNKNOWN_MESSAGE_TYPE") && unknown["requestId"] == .string("U"))
        #expect(receive(&machine, #"{"type":"streamClose","data":{"sessionId":"s"}}"#) == [.release(sessionID: "s")])
        let subscribe = receive(&machine, #"{"type":"subscribe","requestId":"S","data":{"events":["a"],"sessionIds":["s"]}}"#)
        #expect(subscribe == [.subscribe(Subscribe(events: ["a"], sessionIds: ["s"]), requestID: "S")])
    }

    @Test func registerDeviceTakesOnlyAnAPNsToken() throws {
        var machine = open()
        let token = String(repeating: "AB", count: 32)
        let platform = String(repeating: "p", count: 40)
        let registered = receive(&machine, #"{"type":"registerDevice","requestId":"D","data":{"token":"\#(token)","platform":"\#(platform)"}}"#)
        #expect(registered == [.registerPush(token: token.lowercased(), platform: String(platform.prefix(32)), requestID: "D")])
        let refused = receive(&machine, #"{"type":"registerDevice","requestId":"D","data":{"token":"not-hex!"}}"#)
        #expect(refused.first == .rejectedPushTarget(length: 8), "the log hears the length, never the token")
        #expect(sent(refused).first?["data"]?["code"] == .string("INVALID_MESSAGE"))
    }

    @Test func aFailedTurnIsAnsweredTheWayItsRequestIsAnswered() throws {
        let error = CompanionError.queueFull(2, sessionID: "s")
        func request(_ kind: CompanionTurnRequest.Kind) -> CompanionTurnRequest {
            CompanionTurnRequest(kind: kind, text: "t", sessionID: "hint", directory: nil, fallbackDirectory: nil, clientID: "x")
        }
        let command = try #require(JSONValue.parse(request(.command(requestID: "R")).failure(.outsideRoot("/etc"), now: 0)))
        #expect(
            command["type"] == .string("claudeResponse") && command["data"]?["sessionId"] == .string("hint"),
            "a session failure names the id sent"
        )
        let refused = try #require(JSONValue.parse(request(.command(requestID: "R")).failure(error, now: 0)))
        #expect(refused["data"]?["sessionId"] == .string("s"), "a turn refusal names the session it was refused in")
        let ask = try #require(JSONValue.parse(request(.ask(requestID: "A")).failure(error, now: 0)))
        #expect(ask["type"] == .string("askResponse") && ask["data"] == .object(["success": .bool(false), "error": .string(error.message)]))
        let stream = try #require(JSONValue.parse(request(.streamSend(requestID: nil)).failure(error, now: 0)))
        #expect(stream["type"] == .string("error") && stream["requestId"] == .null && stream["error"]?["code"] == .string("QUEUE_FULL"))
    }
}

/// Core events as one socket's frames.
@Suite struct CompanionRendererTests {
    let turn = TurnRef(runID: "run-1", deviceID: "companion:phone", clientID: "cmd:R")

    func answer(_ content: String, turn: TurnRef?, at millis: Int64 = 5_000) -> BusEvent {
        .message(
            ChatEvent(
                id: "s_1",
                seq: 2,
                userID: "companion",
                conversationID: "cv_1",
                role: .assistant,
                content: content,
                timestampMillis: millis,
                deviceID: nil,
                attachmentsJSON: nil,
                turn: turn
            )
        )
    }

    func frames(_ renderer: inout CompanionRenderer, _ event: BusEvent, queuedAt: Int64? = nil) -> [JSONValue] {
        renderer.render(event, sessionID: "s", now: 9_000, queuedAt: queuedAt).compactMap { JSONValue.parse($0) }
    }

    @Test func theAskingDeviceGetsTheReplyAfterTheTurnsFrames() {
        var mine = CompanionRenderer(deviceID: "companion:phone")
        var theirs = CompanionRenderer(deviceID: "companion:other")
        let progress = BusEvent.streaming(TurnProgress(turn: turn, eventID: "s_1", conversationID: "cv_1", content: "One.\n\nTw", startedAt: 1_000))
        #expect(frames(&mine, progress).map { $0["data"]?["chunk"]?["content"] } == [.string("One.")])
        let types = frames(&mine, answer("One.\n\nTwo.", turn: turn)).compactMap { $0["type"]?.stringValue }
        #expect(types == ["streamChunk", "streamChunk", "assistantMessage", "conversationResult", "claudeResponse"])
        #expect(mine.runs.isEmpty, "the run's view goes with its answer")
        let other = frames(&theirs, answer("One.\n\nTwo.", turn: turn))
        #expect(other.of("claudeResponse").isEmpty && other.result("s")?["data"]?["duration"] == .int(0))
    }

    @Test func aReplayCarriesTheQueuesMarksAndItsOriginalTime() throws {
        var renderer = CompanionRenderer(deviceID: "companion:phone")
        let replayed = frames(&renderer, answer("Hi", turn: turn), queuedAt: 7_000)
        #expect(replayed.allSatisfy { $0["_queued"] == .bool(true) && $0["_queuedAt"] == .string("1970-01-01T00:00:07.000Z") })
        #expect(
            replayed.allSatisfy { $0["_originalTimestamp"] == .string("1970-01-01T00:00:05.000Z") && $0["timestamp"] == $0["_originalTimestamp"] }
        )
        let failure = TurnFailure(
            turn: TurnRef(runID: "r2", deviceID: "x", clientID: "stream:1"),
            conversationID: "cv_1",
            userID: "companion",
            cause: .failed,
            reason: "boom",
            timestampMillis: 6_000
        )
        let failed = frames(&renderer, .turnFailed(failure), queuedAt: 7_000)
        let error = try #require(failed.of("error").first)
        #expect(error["data"]?["code"] == .string("COMMAND_FAILED") && error["error"] == nil, "a replayed error keeps the relay's historic form")
        let live = frames(&renderer, .turnFailed(failure))
        #expect(live.of("error").first?["error"]?["code"] == .string("COMMAND_FAILED"))
    }

    @Test func anAbortedCommandIsAFailedClaudeResponse() throws {
        var renderer = CompanionRenderer(deviceID: "companion:phone")
        let failure = TurnFailure(turn: turn, conversationID: "cv_1", userID: "companion", cause: .aborted, reason: "closed", timestampMillis: 6_000)
        let reply = try #require(frames(&renderer, .turnFailed(failure)).of("claudeResponse").first)
        #expect(reply["requestId"] == .string("R") && reply["data"]?["error"] == .string("the command was aborted"))
        #expect(frames(&renderer, .assistantTyping(conversationID: "cv_1", active: true)).isEmpty)
    }
}
