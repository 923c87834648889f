import RelayCore
import Testing

@testable import ClawlineBridge

@Suite struct ProviderFrameTests {
    let device = "0f0e8a3c-6a6b-4c1d-9e2f-1a2b3c4d5e6f"
    let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJlLXNlY3JldA"

    func decode(_ text: String) -> ProviderFrame? { ProviderFrame.decode(Array(text.utf8)) }

    @Test func pairAndAuthResults() {
        #expect(
            decode(#"{"type":"pair_result","success":true,"token":"t","userId":"u"}"#)
                == .pairResult(.init(success: true, token: "t", userID: "u", reason: nil))
        )
        #expect(
            decode(#"{"type":"pair_result","success":false,"reason":"pair_denied"}"#) == .pairResult(.init(success: false, reason: "pair_denied"))
        )
        let auth = decode(
            #"{"type":"auth_result","success":true,"userId":"u","sessionId":"s","replayCount":3,"replayTruncated":false,"historyReset":true}"#
        )
        #expect(auth == .authResult(.init(success: true, userID: "u", replayCount: 3, replayTruncated: false, historyReset: true)))
        #expect(
            decode(#"{"type":"auth_result","success":false,"reason":"token_revoked"}"#) == .authResult(.init(success: false, reason: "token_revoked"))
        )
        #expect(decode(#"{"type":"auth_result","success":true,"replayCount":-4}"#) == .authResult(.init(success: true)), "a negative count is none")
    }

    @Test func messagesAcksErrorsAndTyping() {
        #expect(
            decode(#"{"type":"message","id":"s_1","role":"user","content":"hi","timestamp":1,"streaming":false,"deviceId":"d","attachments":[]}"#)
                == .message(ProviderMessage(id: "s_1", role: .user, content: "hi", deviceID: "d"))
        )
        let streaming = decode(#"{"type":"message","id":"s_2","role":"assistant","content":"He","timestamp":1,"streaming":true}"#)
        #expect(streaming == .message(ProviderMessage(id: "s_2", role: .assistant, content: "He", streaming: true)))
        if case .message(let message) = streaming { #expect(!message.isCursor, "a streaming update is no stored event") }
        let admin = decode(#"{"type":"message","id":"s_3","role":"assistant","content":"x","streaming":false,"channelType":"admin"}"#)
        #expect(admin == .message(ProviderMessage(id: "s_3", role: .assistant, content: "x", isAdminChannel: true)))
        #expect(decode(#"{"type":"ack","id":"c_1"}"#) == .ack(id: "c_1"))
        #expect(
            decode(#"{"type":"error","code":"server_error","message":"boom","messageId":"c_1"}"#)
                == .error(code: "server_error", message: "boom", messageID: "c_1")
        )
        #expect(decode(#"{"type":"error"}"#) == .error(code: "server_error", message: "server_error", messageID: nil))
        #expect(decode(#"{"type":"typing","role":"assistant","active":true}"#) == .typing(active: true))
    }

    @Test func unknownAndBrokenFrames() {
        #expect(decode(#"{"type":"user_info","userId":"u","isAdmin":false}"#) == .other(type: "user_info"))
        #expect(decode(#"{"type":"message","role":"assistant"}"#) == .other(type: "message"), "no id")
        #expect(decode(#"{"type":"ack"}"#) == .other(type: "ack"))
        #expect(decode("not json") == nil)
        #expect(decode(#"{"id":"s_1"}"#) == nil)
        #expect(decode("[]") == nil)
    }

    /// What the account sends passes the relay's own Clawline decoder, field for field.
    @Test func requestsAreWhatAProviderAccepts() throws {
        let pair = ClientFrameDecoder.decode(ProviderRequest.pairRequest(deviceID: device, claimedName: "studio"))
        guard case .success(.pairRequest(let request)) = pair else {
            Issue.record("refused: \(pair)")
            return
        }
        #expect(request.deviceID == device && request.claimedName == "studio")
        #expect(request.deviceInfo["platform"] == .string("linux") && request.deviceInfo["model"] == .string("clawrelay"))
        #expect(request.deviceInfo["appVersion"] == .string(RelayVersion.current))

        #expect(
            ClientFrameDecoder.decode(ProviderRequest.auth(token: token, deviceID: device, lastMessageID: "s_9"))
                == .success(.auth(token: token, deviceID: device, lastMessageID: "s_9"))
        )
        let first = ProviderRequest.auth(token: token, deviceID: device, lastMessageID: nil)
        #expect(JSONValue.parse(first)?["lastMessageId"] == nil, "no cursor before the first event")
        #expect(ClientFrameDecoder.decode(first) == .success(.auth(token: token, deviceID: device, lastMessageID: nil)))

        let id = ProviderRequest.newMessageID()
        #expect(id.hasPrefix("c_") && Identifiers.isUUIDv4(String(id.dropFirst(2))))
        let message = ClientFrameDecoder.decode(ProviderRequest.message(id: id, content: "a \"quoted\" line\n"))
        #expect(message == .success(.message(.init(clientID: id, content: "a \"quoted\" line\n", attachments: []))))
    }

    /// The audit redacts the token of the account's `auth` (and of `pair_result`) like every secret.
    @Test func theAuditNeverSeesTheToken() throws {
        let auth = Redactor.redact(Array(ProviderRequest.auth(token: token, deviceID: device, lastMessageID: nil).utf8))
        #expect(!auth.contains(token) && !auth.contains("c2lnbmF0dXJlLXNlY3JldA"))
        #expect(JSONValue.parse(auth)?["token"] == .string(Redactor.fingerprint(token)))
        #expect(JSONValue.parse(auth)?["deviceId"] == .string(device), "the rest stays readable")
        let opaque = "not-a-jwt-but-secret"
        let result = Redactor.redact(Array(#"{"type":"pair_result","success":true,"token":"\#(opaque)","userId":"u"}"#.utf8))
        #expect(!result.contains(opaque))
    }
}
