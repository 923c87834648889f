import ClawlineWire
import Foundation
import RelayCore
import Testing

@testable import ClawlineBridge

/// The server → client frames: the tolerant reader the upstream account uses, the `Codable`
/// form the listener encodes, and the requests the account sends.
@Suite struct ServerFrameTests {
    let device = "0f0e8a3c-6a6b-4c1d-9e2f-1a2b3c4d5e6f"
    let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJlLXNlY3JldA"

    func decode(_ text: String) -> ServerFrame? { ServerFrame.decode(Array(text.utf8)) }

    @Test func pairAndAuthResults() {
        #expect(
            decode(#"{"type":"pair_result","success":true,"token":"t","userId":"u"}"#) == .pairResult(.init(success: true, token: "t", userId: "u"))
        )
        #expect(decode(#"{"type":"pair_result","success":false,"reason":"pair_denied"}"#) == .pairResult(.refused(.pairDenied)))
        let auth = decode(
            #"{"type":"auth_result","success":true,"userId":"u","sessionId":"s","replayCount":3,"replayTruncated":false,"historyReset":true}"#
        )
        let expected = ServerFrame.AuthResult(success: true, userId: "u", sessionId: "s", replayCount: 3, replayTruncated: false, historyReset: true)
        #expect(auth == .authResult(expected))
        let refused = decode(#"{"type":"auth_result","success":false,"reason":"token_revoked"}"#)
        #expect(refused == .authResult(.init(success: false, reason: "token_revoked", replayCount: 0, replayTruncated: false, historyReset: false)))
        let negative = decode(#"{"type":"auth_result","success":true,"replayCount":-4}"#)
        #expect(
            negative == .authResult(.init(success: true, replayCount: 0, replayTruncated: false, historyReset: false)),
            "a negative count is none"
        )
    }

    @Test func messagesAcksErrorsAndTyping() {
        #expect(
            decode(#"{"type":"message","id":"s_1","role":"user","content":"hi","timestamp":1,"streaming":false,"deviceId":"d","attachments":[]}"#)
                == .message(.init(id: "s_1", role: "user", content: "hi", timestamp: 1, deviceId: "d", attachments: []))
        )
        let streaming = decode(#"{"type":"message","id":"s_2","role":"assistant","content":"He","timestamp":1,"streaming":true}"#)
        #expect(streaming == .message(.init(id: "s_2", role: "assistant", content: "He", timestamp: 1, streaming: true)))
        if case .message(let message) = streaming { #expect(!message.isStored, "a streaming update is no stored event") }
        let admin = decode(#"{"type":"message","id":"s_3","role":"assistant","content":"x","streaming":false,"channelType":"admin"}"#)
        #expect(admin == .message(.init(id: "s_3", role: "assistant", content: "x", channelType: .admin)))
        #expect(decode(#"{"type":"ack","id":"c_1"}"#) == .ack(.init(id: "c_1")))
        #expect(
            decode(#"{"type":"error","code":"server_error","message":"boom","messageId":"c_1"}"#)
                == .error(.init(code: "server_error", message: "boom", messageId: "c_1"))
        )
        #expect(decode(#"{"type":"error"}"#) == .error(.init(code: "server_error", message: "server_error")))
        #expect(decode(#"{"type":"typing","role":"assistant","active":true}"#) == .typing(.init(active: true, channelType: nil)))
        #expect(decode(#"{"type":"user_info","userId":"u","isAdmin":true}"#) == .userInfo(.init(userId: "u", isAdmin: true)))
    }

    @Test func unknownAndBrokenFrames() {
        #expect(decode(#"{"type":"session_info","sessionKey":"k"}"#) == .other(type: "session_info"))
        #expect(decode(#"{"type":"message","role":"assistant"}"#) == .other(type: "message"), "no id")
        #expect(decode(#"{"type":"ack"}"#) == .other(type: "ack"))
        #expect(decode(#"{"type":"typing","role":"user","active":true}"#) == .other(type: "typing"), "not the assistant's")
        #expect(decode("not json") == nil)
        #expect(decode(#"{"id":"s_1"}"#) == nil)
        #expect(decode("[]") == nil)
    }

    /// Every frame the listener encodes reads back as it was, by the tolerant reader and by
    /// JSONDecoder alike: one model for both ends.
    @Test func theCodableFormAndTheReaderAgree() throws {
        let frames: [ServerFrame] = [
            .pairResult(.init(success: true, token: token, userId: "u")),
            .pairResult(.refused(.pairTimeout)),
            .pairApprovalRequest(.init(deviceId: device, claimedName: "laptop", deviceInfo: .object(["platform": .string("Linux")]))),
            .authResult(
                .init(success: true, userId: "u", sessionId: "sess_1", isAdmin: true, replayCount: 2, replayTruncated: true, historyReset: false)
            ),
            .userInfo(.init(userId: "u", isAdmin: false)),
            .ack(.init(id: "c_\"1")),
            .message(.init(id: "s_1", role: "user", content: "é\n🎉", timestamp: 7, deviceId: device, attachments: [], channelType: .personal)),
            .message(.init(id: "s_2", role: "assistant", content: "so far", timestamp: 8, streaming: true, channelType: .admin)),
            .typing(.init(active: true, channelType: .admin)),
            .error(.init(code: "rate_limited", message: "slow down", messageId: "c_9")),
        ]
        for frame in frames {
            let text = frame.encoded()
            #expect(try JSONDecoder().decode(ServerFrame.self, from: Data(text.utf8)) == frame, "\(text)")
            #expect(JSONValue.parse(text)?["type"]?.stringValue == frame.type)
            // The reader fills what it defaults; everything sent reads back the same.
            guard let read = ServerFrame.decode(Array(text.utf8)) else {
                Issue.record("unreadable: \(text)")
                continue
            }
            if case .authResult = frame { #expect(read == frame) }
            if case .message = frame { #expect(read == frame) }
            if case .error = frame { #expect(read == frame) }
            if case .ack = frame { #expect(read == frame) }
        }
    }

    /// What the account sends passes the relay's own listener decoder, field for field.
    @Test func requestsAreWhatAProviderAccepts() throws {
        let request = ClawlineLinkMachine.pairRequest(deviceID: device, claimedName: "studio")
        let pair = ClientFrame.decode(ClientFrame.pairRequest(request).encoded())
        #expect(pair == .success(.pairRequest(request)))
        #expect(request.deviceInfo["platform"] == .string("linux") && request.deviceInfo["model"] == .string("clawrelay"))
        #expect(request.deviceInfo["appVersion"] == .string(RelayVersion.current))
        let id = ClientFrame.Message.newID()
        #expect(id.hasPrefix("c_") && Identifiers.isUUIDv4(String(id.dropFirst(2))))
    }

    /// The audit redacts the token of the account's `auth` (and of `pair_result`) like every secret.
    @Test func theAuditNeverSeesTheToken() throws {
        let auth = Redactor.redact(Array(ClientFrame.auth(.init(token: token, deviceId: device, lastMessageId: nil)).encoded().utf8))
        #expect(!auth.contains(token) && !auth.contains("c2lnbmF0dXJlLXNlY3JldA"))
        #expect(JSONValue.parse(auth)?["token"] == .string(Redactor.fingerprint(token)))
        #expect(JSONValue.parse(auth)?["deviceId"] == .string(device), "the rest stays readable")
        let opaque = "not-a-jwt-but-secret"
        let result = Redactor.redact(Array(ServerFrame.pairResult(.init(success: true, token: opaque, userId: "u")).encoded().utf8))
        #expect(!result.contains(opaque))
    }
}
