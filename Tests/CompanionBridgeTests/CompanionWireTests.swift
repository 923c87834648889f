import CompanionWire
import Foundation
import RelayCore
import Testing

/// A frame as the relay built it before the typed model: a `JSONValue` dictionary, encoded with
/// sorted keys. The typed model must write the same bytes.
private func legacy(
    _ type: String,
    requestID: String? = nil,
    at millis: Int64,
    _ data: [String: JSONValue],
    extra: [String: JSONValue] = [:]
) -> String {
    var fields = extra
    fields["type"] = .string(type)
    fields["requestId"] = requestID.map(JSONValue.string) ?? .null
    fields["timestamp"] = .string(CompanionTimestamp.string(millis))
    fields["data"] = .object(data)
    return JSONValue.object(fields).encoded()
}

private func typed(
    _ payload: some CompanionPayload,
    requestID: String? = nil,
    at millis: Int64 = 1_754_413_392_345,
    error: ErrorEnvelope? = nil,
    queued: QueuedMarks? = nil
) -> String {
    CompanionFrame(payload, requestID: requestID, at: millis, error: error, queued: queued).encoded()
}

private let at: Int64 = 1_754_413_392_345
private let stamp = "2025-08-05T17:03:12.345Z"

@Suite struct CompanionTimestampTests {
    /// What the relay wrote before: `gmtime_r` and `%04d-%02d-…`.
    func reference(_ millis: Int64) -> String {
        var seconds = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let fraction = Int((millis % 1000 + 1000) % 1000)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900,
            Int(parts.tm_mon) + 1,
            Int(parts.tm_mday),
            Int(parts.tm_hour),
            Int(parts.tm_min),
            Int(parts.tm_sec),
            fraction
        )
    }

    @Test func whatJavaScriptsToISOStringWrites() {
        #expect(CompanionTimestamp.string(0) == "1970-01-01T00:00:00.000Z")
        #expect(CompanionTimestamp.string(at) == stamp)
        #expect(CompanionTimestamp.string(951_782_400_000) == "2000-02-29T00:00:00.000Z", "a leap day")
        #expect(CompanionTimestamp.string(253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
    }

    @Test func sameAsTheCLibraryOverCenturies() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let millis = Int64.random(in: 0...4_102_444_800_000, using: &generator)
            #expect(CompanionTimestamp.string(millis) == reference(millis), "\(millis)")
        }
        for millis: Int64 in [86_399_999, 86_400_000, 4_107_542_400_000, 1_709_164_800_000, 1_709_251_199_999] {
            #expect(CompanionTimestamp.string(millis) == reference(millis), "\(millis)")
        }
    }
}

@Suite struct CompanionFrameBytesTests {
    @Test func repliesAreByteForByteWhatTheDictionariesWrote() {
        let welcome: [String: JSONValue] = [
            "clientId": .string("c1"), "serverVersion": .string("1.0.0"), "claudeCodeVersion": .null,
            "capabilities": .array(Welcome.capabilities.map(JSONValue.string)), "maxSessions": .int(10),
        ]
        #expect(typed(Welcome(clientId: "c1", maxSessions: 10)) == legacy("welcome", at: at, welcome))
        #expect(
            typed(Pong(serverTime: stamp, clientTimestamp: nil), requestID: "R")
                == legacy("pong", requestID: "R", at: at, ["serverTime": .string(stamp)])
        )
        #expect(
            typed(Pong(serverTime: stamp, clientTimestamp: .null), requestID: "R")
                == legacy("pong", requestID: "R", at: at, ["serverTime": .string(stamp), "clientTimestamp": .null])
        )
        #expect(
            typed(Subscribed(events: ["a"], sessionIds: ["s"]), requestID: "R")
                == legacy(
                    "subscribed",
                    requestID: "R",
                    at: at,
                    ["events": .array([.string("a")]), "sessionIds": .array([.string("s")]), "success": .bool(true)]
                )
        )
        #expect(
            typed(ClaudeResponse.answer("hi", sessionID: "s"), requestID: "R")
                == legacy(
                    "claudeResponse",
                    requestID: "R",
                    at: at,
                    ["content": .string("hi"), "success": .bool(true), "sessionId": .string("s"), "error": .null]
                )
        )
        #expect(
            typed(ClaudeResponse.failure("no", sessionID: nil), requestID: "R")
                == legacy(
                    "claudeResponse",
                    requestID: "R",
                    at: at,
                    ["content": .string(""), "success": .bool(false), "sessionId": .null, "error": .string("no")]
                )
        )
        let result: JSONValue = .object([
            "type": .string("result"), "subtype": .string("success"), "is_error": .bool(false), "duration_ms": .double(12), "num_turns": .int(1),
            "result": .string("hi"), "session_id": .string("s"),
        ])
        #expect(
            typed(AskResponse(success: true, response: CLIResult(result: "hi", sessionID: "s", durationMillis: 12), error: nil), requestID: "R")
                == legacy("askResponse", requestID: "R", at: at, ["success": .bool(true), "response": result, "error": .null])
        )
        #expect(
            typed(AskResponse(success: false, response: nil, error: "no"), requestID: "R")
                == legacy("askResponse", requestID: "R", at: at, ["success": .bool(false), "error": .string("no")])
        )
        #expect(
            typed(StreamStarted(sessionId: "s", sessionName: "app", workingDirectory: "/p/app"))
                == legacy("streamStarted", at: at, ["sessionId": .string("s"), "sessionName": .string("app"), "workingDirectory": .string("/p/app")])
        )
        #expect(
            typed(SessionStatus(sessionId: "s", status: "processing", lastActivity: stamp, messageCount: 1))
                == legacy(
                    "sessionStatus",
                    at: at,
                    ["sessionId": .string("s"), "status": .string("processing"), "lastActivity": .string(stamp), "messageCount": .int(1)]
                )
        )
        #expect(
            typed(WorkingDirectorySet(workingDirectory: "/p"))
                == legacy("workingDirectorySet", at: at, ["workingDirectory": .string("/p"), "success": .bool(true)])
        )
        #expect(
            typed(DeviceRegistered())
                == legacy("deviceRegistered", at: at, ["success": .bool(true), "message": .string("Device registered for push notifications")])
        )
    }

    @Test func errorsCarryBothFormsExceptWhenQueued() {
        let error = CompanionError.sessionLimit(10)
        let data: [String: JSONValue] = [
            "code": .string("SESSION_LIMIT"), "message": .string("Maximum number of sessions (10) reached"),
            "details": .object(["maxSessions": .int(10)]),
        ]
        let envelope: JSONValue = .object(["code": .string("SESSION_LIMIT"), "message": .string("Maximum number of sessions (10) reached")])
        #expect(typed(error.data, requestID: "R", error: error.envelope) == legacy("error", requestID: "R", at: at, data, extra: ["error": envelope]))
        let failed = CompanionError.commandFailed("boom", sessionID: "s")
        let failedData: [String: JSONValue] = [
            "code": .string("COMMAND_FAILED"), "message": .string("boom"), "details": .object([:]), "sessionId": .string("s"),
        ]
        let marks: [String: JSONValue] = [
            "_queued": .bool(true), "_queuedAt": .string(CompanionTimestamp.string(0)), "_originalTimestamp": .string(stamp),
        ]
        #expect(typed(failed.data, queued: QueuedMarks(queuedAt: 0, originalAt: at)) == legacy("error", at: at, failedData, extra: marks))
    }

    @Test func sessionEventsAreByteForByteWhatTheDictionariesWrote() {
        func chunk(_ id: String, _ type: String, _ content: String, final: Bool, metadata: [String: JSONValue]? = nil) -> [String: JSONValue] {
            var chunk: [String: JSONValue] = ["id": .string(id), "type": .string(type), "content": .string(content), "isFinal": .bool(final)]
            if let metadata { chunk["metadata"] = .object(metadata) }
            return ["sessionId": .string("s"), "isFinal": .bool(final), "chunk": .object(chunk)]
        }
        #expect(
            typed(StreamChunk(sessionId: "s", chunk: .init(id: "chunk-0", type: "text", content: "Hi", isFinal: false)))
                == legacy("streamChunk", at: at, chunk("chunk-0", "text", "Hi", final: false))
        )
        let tool = StreamChunk.Chunk(id: "chunk-1", type: "tool_use", content: "ls", isFinal: false, metadata: .init(toolName: "Bash", toolId: "t1"))
        #expect(
            typed(StreamChunk(sessionId: "s", chunk: tool))
                == legacy(
                    "streamChunk",
                    at: at,
                    chunk("chunk-1", "tool_use", "ls", final: false, metadata: ["toolName": .string("Bash"), "toolId": .string("t1")])
                )
        )
        #expect(
            typed(UserMessageEvent(sessionId: "s", messageId: "m", content: "yo", deviceId: nil, timestamp: stamp))
                == legacy(
                    "userMessage",
                    at: at,
                    ["sessionId": .string("s"), "messageId": .string("m"), "content": .string("yo"), "deviceId": .null, "timestamp": .string(stamp)]
                )
        )
        #expect(
            typed(AssistantMessage(messageId: "m", sessionId: "s", text: "hi", timestamp: stamp))
                == legacy(
                    "assistantMessage",
                    at: at,
                    [
                        "type": .string("assistant_response"), "messageId": .string("m"), "sessionId": .string("s"),
                        "content": .array([.object(["type": .string("text"), "text": .string("hi")])]), "timestamp": .string(stamp),
                    ]
                )
        )
        #expect(
            typed(ConversationResult(success: true, result: "hi", sessionId: "s", duration: 1500, timestamp: stamp))
                == legacy(
                    "conversationResult",
                    at: at,
                    [
                        "type": .string("final_result"), "success": .bool(true), "result": .string("hi"), "sessionId": .string("s"),
                        "duration": .double(1500), "timestamp": .string(stamp),
                    ]
                )
        )
        #expect(
            typed(ConversationResult(success: false, result: nil, sessionId: "s", duration: nil, timestamp: stamp))
                == legacy(
                    "conversationResult",
                    at: at,
                    ["type": .string("final_result"), "success": .bool(false), "sessionId": .string("s"), "timestamp": .string(stamp)]
                )
        )
        #expect(
            typed(ToolUse(sessionId: "s", toolName: "Bash", toolInput: .object(["command": .string("ls")]), toolId: "t1", timestamp: stamp))
                == legacy(
                    "toolUse",
                    at: at,
                    [
                        "type": .string("tool_use"), "sessionId": .string("s"), "toolName": .string("Bash"),
                        "toolInput": .object(["command": .string("ls")]), "toolId": .string("t1"), "timestamp": .string(stamp),
                    ]
                )
        )
        #expect(
            typed(
                ToolResult(
                    sessionId: "s",
                    toolName: "Bash",
                    toolId: "t1",
                    result: "no such file",
                    success: false,
                    error: "no such file",
                    timestamp: stamp
                )
            )
                == legacy(
                    "toolResult",
                    at: at,
                    [
                        "type": .string("tool_result"), "sessionId": .string("s"), "toolName": .string("Bash"), "toolId": .string("t1"),
                        "result": .string("no such file"), "success": .bool(false), "error": .string("no such file"), "timestamp": .string(stamp),
                    ]
                )
        )
    }

    @Test func restBodiesAreByteForByteWhatTheDictionariesWrote() {
        #expect(
            CompanionJSON.encode(CompanionHTTPError.invalidToken.body)
                == JSONValue.object(["error": .string("Invalid token"), "message": .string("The provided auth token is not valid")]).encoded()
        )
        #expect(CompanionJSON.encode(CompanionHTTPError.internalError.body) == #"{"error":"Internal error"}"#)
        #expect(CompanionJSON.encode(ErrorBody("no", code: "QUEUE_FULL")) == #"{"code":"QUEUE_FULL","error":"no"}"#)
        let refused = ProjectStartAnswer.refused(project: "x", error: "Project not found", message: "m")
        let refusedSession: JSONValue = .object([
            "sessionId": .string(""), "projectName": .string("x"), "projectPath": .string(""), "status": .string("error"), "startedAt": .string(""),
        ])
        #expect(
            CompanionJSON.encode(refused)
                == JSONValue.object([
                    "success": .bool(false), "error": .string("Project not found"), "message": .string("m"), "code": .string("Project not found"),
                    "session": refusedSession,
                ]).encoded()
        )
        let description = SessionDescription(sessionId: "s", projectPath: "/p", status: "stopped", startedAt: stamp)
        #expect(
            CompanionJSON.encode(description)
                == JSONValue.object([
                    "sessionId": .string("s"), "projectPath": .string("/p"), "status": .string("stopped"), "startedAt": .string(stamp),
                    "stoppedAt": .null,
                    "error": .null,
                ]).encoded()
        )
        let continued = SessionContinued(
            sessionId: "s",
            conversationStarted: false,
            workingDirectory: "/p",
            initialPrompt: nil,
            createdAt: 1,
            lastActivity: 2
        )
        #expect(
            CompanionJSON.encode(continued)
                == JSONValue.object([
                    "success": .bool(true), "sessionId": .string("s"), "conversationStarted": .bool(false), "workingDirectory": .string("/p"),
                    "initialPrompt": .null, "createdAt": .int(1), "lastActivity": .int(2),
                ]).encoded()
        )
        #expect(
            CompanionJSON.encode(HealthBody(timestamp: stamp, sessions: 2))
                == JSONValue.object(["status": .string("healthy"), "version": .string("1.0.0"), "timestamp": .string(stamp), "sessions": .int(2)])
                .encoded()
        )
    }
}

@Suite struct CompanionErrorTableTests {
    @Test func everyCodeHasAStatusAndRESTRefusalsKeepTheirForms() {
        #expect(CompanionErrorCode.allCases.count == 11)
        #expect(CompanionErrorCode.invalidWorkingDirectory.httpStatus == 403 && CompanionErrorCode.sessionLimit.httpStatus == 429)
        #expect(CompanionErrorCode.invalidMessage.httpStatus == 400 && CompanionErrorCode.storeFailed.httpStatus == 500)
        #expect(ErrorBody.refusal(.outsideRoot("/etc")) == ErrorBody("Invalid working directory: /etc is not inside the relay's projects root"))
        #expect(ErrorBody.refusal(.sessionLimit(2)) == ErrorBody("Too many sessions", message: "Maximum number of sessions (2) reached"))
        #expect(ErrorBody.refusal(.invalid("x")) == ErrorBody("x"))
        #expect(CompanionHTTPError.missingToken.status == 401 && CompanionHTTPError.bodyTooLarge(limit: 1).status == 413)
        #expect(CompanionClose.authenticationRequired == CompanionClose(code: 1008, reason: "Authentication required"))
    }
}
