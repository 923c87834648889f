import CompanionWire
import RelayCore
import RelayTransport
import Testing

@testable import CompanionBridge

@Suite struct CompanionServerEventTests {
    func decode(_ text: String) -> CompanionServerEvent? { CompanionServerEvent.decode(Array(text.utf8)) }

    @Test func welcomeAsTheServerSendsIt() {
        let text =
            #"{"type":"welcome","timestamp":"2026-11-22T10:00:00.123Z","data":{"clientId":"c1","serverVersion":"1.0.0","claudeCodeVersion":null,"capabilities":["chat"],"maxSessions":10}}"#
        #expect(decode(text) == .welcome(serverVersion: "1.0.0"))
        #expect(decode(#"{"type":"welcome"}"#) == .welcome(serverVersion: nil))
    }

    @Test func sessionStartedInTheRelayAndTheRealServerForms() {
        let relay =
            #"{"type":"streamStarted","requestId":"r1","timestamp":"t","data":{"sessionId":"s1","sessionName":"app","workingDirectory":"/p/app"}}"#
        let server =
            #"{"type":"streamStart","requestId":"r2","timestamp":"t","data":{"success":true,"sessionId":"s2","message":"ok","timestamp":"t"}}"#
        #expect(decode(relay) == .sessionStarted(requestID: "r1", sessionID: "s1"))
        #expect(decode(server) == .sessionStarted(requestID: "r2", sessionID: "s2"))
        #expect(
            decode(#"{"type":"streamStart","requestId":"r3","data":{"success":true,"sessionId":null}}"#)
                == .sessionStarted(requestID: "r3", sessionID: nil)
        )
    }

    @Test func refusedStreamStartIsAnError() {
        let text = #"{"type":"streamStart","requestId":"r1","data":{"success":false,"message":"Maximum number of sessions (10) reached"}}"#
        #expect(decode(text) == .error(requestID: "r1", code: "STREAM_START_FAILED", message: "Maximum number of sessions (10) reached"))
    }

    @Test func errorInEveryForm() {
        let server =
            #"{"type":"error","requestId":"r1","timestamp":"t","error":{"code":"COMMAND_FAILED","message":"AICLI Code execution failed: boom","command":"x"}}"#
        let relay =
            #"{"type":"error","requestId":"r2","timestamp":"t","error":{"code":"INVALID_SESSION","message":"no such session"},"data":{"code":"INVALID_SESSION","message":"no such session","details":{}}}"#
        let guide = #"{"type":"error","requestId":null,"data":{"sessionId":"s","error":"it broke","code":"SESSION_LIMIT"}}"#
        let bare = #"{"type":"error","requestId":"r4","data":{"code":"X","message":""}}"#
        #expect(decode(server) == .error(requestID: "r1", code: "COMMAND_FAILED", message: "AICLI Code execution failed: boom"))
        #expect(decode(relay) == .error(requestID: "r2", code: "INVALID_SESSION", message: "no such session"))
        #expect(decode(guide) == .error(requestID: nil, code: "SESSION_LIMIT", message: "it broke"))
        #expect(decode(bare) == .error(requestID: "r4", code: "X", message: "the server reported X"))
        #expect(decode(#"{"type":"error"}"#) == .error(requestID: nil, code: "ERROR", message: "the server reported ERROR"))
    }

    @Test func claudeResponseSuccessAndFailure() {
        let ok = #"{"type":"claudeResponse","requestId":"r1","timestamp":"t","data":{"content":"hello","success":true,"sessionId":"s","error":null}}"#
        let failed = #"{"type":"claudeResponse","requestId":"r2","data":{"content":"","success":false,"sessionId":"s","error":"backend down"}}"#
        #expect(decode(ok) == .response(requestID: "r1", .answer("hello", sessionID: "s")))
        #expect(decode(failed) == .response(requestID: "r2", .failure("backend down", sessionID: "s")))
        #expect(
            decode(#"{"type":"claudeResponse","requestId":"r3","data":{"content":"x"}}"#)
                == .response(requestID: "r3", ClaudeResponse(content: "x", success: true, sessionId: nil, error: nil))
        )
    }

    @Test func streamChunkWithQueuedMarkers() {
        let live =
            #"{"type":"streamChunk","requestId":null,"timestamp":"t","data":{"sessionId":"s1","chunk":{"id":"chunk-0","type":"text","content":"Hi","timestamp":"t","isFinal":false},"isFinal":false}}"#
        let queued =
            #"{"type":"streamChunk","requestId":null,"timestamp":"t","data":{"sessionId":"s1","chunk":{"id":"chunk-0","type":"text","content":"old","isFinal":false}},"_queued":true,"_queuedAt":"t"}"#
        let chunk = { (content: String) in StreamChunk(sessionId: "s1", chunk: .init(id: "chunk-0", type: "text", content: content, isFinal: false)) }
        #expect(decode(live) == .chunk(chunk("Hi"), queued: false))
        #expect(decode(queued) == .chunk(chunk("old"), queued: true))
        #expect(decode(#"{"type":"streamChunk","data":{"chunk":{"type":"text","content":"x"}}}"#) == .other(type: "streamChunk"))
    }

    @Test func unknownAndMalformedFrames() {
        #expect(decode(#"{"type":"processStart","data":{"pid":1}}"#) == .other(type: "processStart"))
        #expect(decode(#"{"type":"pong","requestId":"p1","data":{"serverTime":"t"}}"#) == .pong)
        #expect(decode("not json") == nil)
        #expect(decode(#"{"type":7}"#) == nil)
        #expect(decode("[]") == nil)
    }
}

@Suite struct CompanionClientFramesTests {
    @Test func framesTheAccountSendsUseTheAppsEnvelope() throws {
        let command = ClaudeCommand(command: "hi", projectPath: "/p/app", sessionId: "s1")
        let frame = try #require(JSONValue.parse(CompanionFrame(command, requestID: "r1", at: 1_700_000_000_123).encoded()))
        #expect(frame["type"] == .string("claudeCommand"))
        #expect(frame["requestId"] == .string("r1"))
        #expect(frame["timestamp"] == .string("2023-11-14T22:13:20.123Z"))
        #expect(frame["data"] == .object(["command": .string("hi"), "projectPath": .string("/p/app"), "sessionId": .string("s1")]))
        let start = try #require(
            JSONValue.parse(CompanionFrame(StreamStart(sessionId: "s2", workingDirectory: nil), requestID: "r2", at: 0).encoded())
        )
        #expect(start["data"]?.objectValue?.keys.sorted() == ["sessionId"])
    }

    @Test func whatTheAccountSendsTheDownstreamReadsBack() throws {
        let sent: [any CompanionPayload] = [
            ClaudeCommand(command: "hi", projectPath: "/p/app", sessionId: "s1"), StreamStart(sessionId: "s2", workingDirectory: "/p"),
            Subscribe(events: ["streamChunk"], sessionIds: ["s1"]), Ping(timestamp: .string("t")),
        ]
        func text(_ payload: some CompanionPayload) -> String { CompanionFrame(payload, requestID: "r", at: 0).encoded() }
        let decoded = try sent.map { payload in try CompanionClientFrame.decode(CompanionRequest.parse(Array(text(payload).utf8)).get()).get() }
        #expect(
            decoded == [
                .claudeCommand(ClaudeCommand(command: "hi", projectPath: "/p/app", sessionId: "s1")),
                .streamStart(StreamStart(sessionId: "s2", workingDirectory: "/p")),
                .subscribe(Subscribe(events: ["streamChunk"], sessionIds: ["s1"])),
                .ping(Ping(timestamp: .string("t"))),
            ]
        )
    }

    @Test func tokenGoesInTheQueryEscaped() {
        let target = ServiceLoop.ClientTarget(host: "h", port: 1, path: "/ws")
        #expect(target.withToken("abc_DEF-123").path == "/ws?token=abc_DEF-123")
        #expect(target.withToken("a+b/c=").path == "/ws?token=a%2Bb%2Fc%3D")
        #expect(ServiceLoop.ClientTarget(host: "h", port: 1, path: "/ws?x=1").withToken("t").path == "/ws?x=1&token=t")
    }
}
