import CompanionWire
import RelayCore
import Testing

/// The client frames a Companion server reads: the envelope, then each type's fields.
@Suite struct CompanionRequestTests {
    func parse(_ text: String) -> Result<CompanionRequest, CompanionError> { CompanionRequest.parse(Array(text.utf8)) }

    func decode(_ type: String, _ data: String) throws -> Result<CompanionClientFrame, CompanionError> {
        CompanionClientFrame.decode(try parse(#"{"type":"\#(type)","requestId":"R","data":\#(data)}"#).get())
    }

    func refusal(_ type: String, _ data: String) throws -> CompanionError? {
        guard case .failure(let error) = try decode(type, data) else { return nil }
        return error
    }

    @Test func envelopesAndTheAppsBareBackgroundingFrame() throws {
        let enveloped = try parse(#"{"type":"claudeCommand","requestId":"R","data":{"command":"hi"}}"#).get()
        #expect(enveloped.type == "claudeCommand" && enveloped.requestID == "R" && enveloped.data.string("command") == "hi")
        let bare = try parse(#"{"type":"client_backgrounding","sessionId":"s1","timestamp":"2025-08-05T17:03:12Z"}"#).get()
        #expect(bare.requestID == nil && bare.data.string("sessionId") == "s1")
        #expect(try CompanionClientFrame.decode(bare).get() == .presence(SessionPresence(backgrounded: true, sessionId: "s1")))
        let nullID = try parse(#"{"type":"ping","requestId":null}"#).get()
        #expect(nullID.requestID == nil && nullID.data.isEmpty)
    }

    @Test func badEnvelopesAreInvalidMessagesThatSayWhy() {
        let cases = [
            "not json": "the frame is not a JSON object", "[1]": "the frame is not a JSON object",
            #"{"data":{}}"#: "type must be a non-empty string", #"{"type":""}"#: "type must be a non-empty string",
            #"{"type":"ping","requestId":7}"#: "requestId must be a string of at most 256 bytes",
            #"{"type":"ping","requestId":"\#(String(repeating: "r", count: 257))"}"#: "requestId must be a string of at most 256 bytes",
            #"{"type":"ping","data":[1]}"#: "data must be an object",
        ]
        for (text, message) in cases {
            guard case .failure(let error) = parse(text) else {
                Issue.record("\(text) was accepted")
                continue
            }
            #expect(error == .invalid(message), "\(text)")
        }
    }

    @Test func everyTypeReadsItsFields() throws {
        #expect(
            try decode("claudeCommand", #"{"command":"hi","projectPath":"/p","sessionId":"s","args":[]}"#).get()
                == .claudeCommand(ClaudeCommand(command: "hi", projectPath: "/p", sessionId: "s"))
        )
        #expect(
            try decode("claudeCommand", #"{"command":"hi","projectPath":7,"sessionId":null}"#).get()
                == .claudeCommand(ClaudeCommand(command: "hi", projectPath: nil, sessionId: nil)),
            "lenient fields of another type count as absent"
        )
        #expect(
            try decode("ask", #"{"prompt":"q","workingDirectory":"app"}"#).get() == .ask(Ask(prompt: "q", workingDirectory: "app", sessionId: nil))
        )
        #expect(
            try decode("streamStart", #"{"initialPrompt":"go","workingDirectory":"lib"}"#).get()
                == .streamStart(StreamStart(sessionId: nil, workingDirectory: "lib", initialPrompt: "go"))
        )
        #expect(try decode("streamSend", #"{"sessionId":"s","prompt":"p"}"#).get() == .streamSend(StreamSend(sessionId: "s", prompt: "p")))
        #expect(
            try decode("streamClose", #"{"sessionId":"s","reason":"user_requested"}"#).get()
                == .streamClose(StreamClose(sessionId: "s", reason: "user_requested"))
        )
        #expect(try decode("subscribe", #"{"events":["a"]}"#).get() == .subscribe(Subscribe(events: ["a"], sessionIds: [])))
        #expect(
            try decode("setWorkingDirectory", #"{"workingDirectory":"app"}"#).get()
                == .setWorkingDirectory(SetWorkingDirectory(workingDirectory: "app"))
        )
        #expect(try decode("sessionForegrounded", #"{"sessionId":"s"}"#).get() == .presence(SessionPresence(backgrounded: false, sessionId: "s")))
        #expect(
            try decode("permission", #"{"sessionId":"s","response":"Always allow","remember":false}"#).get()
                == .permission(PermissionAnswer(sessionId: "s", response: "Always allow"))
        )
        #expect(try decode("ping", #"{"timestamp":12}"#).get() == .ping(Ping(timestamp: .int(12))))
    }

    @Test func registerDeviceInTheGuidesAndTheAppsForm() throws {
        guard case .registerDevice(let guide) = try decode("registerDevice", #"{"deviceToken":"AB","deviceInfo":{"platform":"ipados"}}"#).get(),
            case .registerDevice(let app) = try decode("registerDevice", #"{"token":"cd","platform":"ios"}"#).get(),
            case .registerDevice(let bare) = try decode("registerDevice", #"{"token":"ef"}"#).get()
        else {
            Issue.record("not read as registerDevice")
            return
        }
        #expect(guide.apnsToken == "AB" && guide.platformName == "ipados")
        #expect(app.apnsToken == "cd" && app.platformName == "ios")
        #expect(bare.platformName == "ios")
    }

    @Test func refusalsNameTheField() throws {
        #expect(try refusal("claudeCommand", #"{"command":7}"#) == .invalid("command must be a string"))
        #expect(try refusal("claudeCommand", #"{"command":""}"#) == .invalid("command is required"))
        #expect(try refusal("ask", "{}") == .invalid("prompt is required"))
        #expect(try refusal("streamStart", #"{"prompt":1}"#) == .invalid("prompt must be a string"))
        #expect(try refusal("streamStart", #"{"sessionId":[]}"#) == .invalid("sessionId must be a string"))
        #expect(try refusal("streamSend", #"{"prompt":"p"}"#) == .invalid("sessionId is required"))
        #expect(try refusal("subscribe", #"{"events":"assistantMessage"}"#) == .invalid("events must be an array of strings"))
        #expect(try refusal("subscribe", #"{"events":[],"sessionIds":[1]}"#) == .invalid("sessionIds must be an array of strings"))
        #expect(try refusal("subscribe", "{}") == .invalid("events must be an array of strings"))
        let many = "[" + (0...100).map { "\"s\($0)\"" }.joined(separator: ",") + "]"
        #expect(try refusal("subscribe", #"{"events":[],"sessionIds":\#(many)}"#) == .invalid("at most 100 sessionIds"))
        #expect(try refusal("registerDevice", #"{"token":5}"#) == .invalid("token must be a string"))
        #expect(try refusal("sessionBackgrounded", #"{"sessionId":1}"#) == .invalid("sessionId must be a string"))
        #expect(try refusal("sendCommand", "{}") == .unknownType("sendCommand"))
        #expect(try refusal("sendCommand", "{}")?.code == .unknownMessageType)
    }

    @Test func promptsAreBoundedByTheLimit() throws {
        let big = String(repeating: "x", count: CompanionLimits.maxPromptBytes + 1)
        #expect(try refusal("claudeCommand", #"{"command":"\#(big)"}"#) == CompanionError(.payloadTooLarge, "command is larger than 256 KB"))
        #expect(try refusal("streamSend", #"{"sessionId":"s","prompt":"\#(big)"}"#)?.code == .payloadTooLarge)
        #expect(try refusal("streamStart", #"{"initialPrompt":"\#(big)"}"#) == .promptTooLarge)
        let fits = String(repeating: "x", count: CompanionLimits.maxPromptBytes)
        #expect(try refusal("ask", #"{"prompt":"\#(fits)"}"#) == nil)
    }
}
