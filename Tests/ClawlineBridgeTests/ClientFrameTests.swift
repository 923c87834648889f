import ClawlineWire
import Foundation
import RelayCore
import Testing

/// The client → server frames: the listener's decoder (every schema rule and the error it gets)
/// and the `Codable` form the upstream account encodes, which the decoder reads back as it was.
@Suite struct ClientFrameTests {
    let device = "0f0e8a3c-6a6b-4c1d-9e2f-1a2b3c4d5e6f"

    enum Outcome: Equatable {
        case decoded
        case malformed
        case refused(ClawlineErrorCode, closes: Bool)
    }

    func outcome(_ text: String) -> Outcome {
        switch ClientFrame.decode(text) {
        case .success: .decoded
        case .failure(.malformed): .malformed
        case .failure(.refused(let error)): .refused(error.code, closes: error.closes)
        }
    }

    static let invalidOpen = Outcome.refused(.invalidMessage, closes: false)
    static let invalidClosing = Outcome.refused(.invalidMessage, closes: true)

    @Test func malformedJSONClosesSilently() {
        #expect(outcome("{not json") == .malformed)
        #expect(outcome(#"{"type": "message", "id": "c_1""#) == .malformed)
    }

    @Test func missingOrUnknownTypeIsInvalidButOpen() {
        for text in ["{}", #"{"type":"cancel"}"#, "[1]", #"{"type":7}"#, #"{"id":"c_1","content":"no type"}"#] {
            #expect(outcome(text) == Self.invalidOpen, "\(text)")
        }
    }

    @Test(arguments: [#""protocolVersion":2,"#, #""protocolVersion":"1","#, #""protocolVersion":null,"#, #""protocolVersion":1.5,"#, ""])
    func badProtocolVersionClosesTheSocket(_ version: String) {
        let pair = #"{"type":"pair_request",\#(version)"deviceId":"\#(device)","deviceInfo":{"platform":"iOS","model":"x"}}"#
        #expect(outcome(pair) == Self.invalidClosing)
        let auth = #"{"type":"auth",\#(version)"token":"t","deviceId":"\#(device)"}"#
        #expect(outcome(auth) == Self.invalidClosing)
    }

    @Test func pairRequestFieldRules() throws {
        func pair(_ id: String, _ info: String, name: String = "") -> String {
            #"{"type":"pair_request","protocolVersion":1,"deviceId":"\#(id)",\#(name)"deviceInfo":\#(info)}"#
        }
        let good = #"{"platform":"iOS","model":"x"}"#
        for id in ["ABC123", "", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"] { #expect(outcome(pair(id, good)) == Self.invalidOpen, "\(id)") }
        #expect(
            outcome(#"{"type":"pair_request","protocolVersion":1,"deviceId":12345,"deviceInfo":{"platform":"iOS","model":"x"}}"#) == Self.invalidOpen
        )
        #expect(outcome(#"{"type":"pair_request","protocolVersion":1,"deviceInfo":{"platform":"iOS","model":"x"}}"#) == Self.invalidOpen)
        let badInfos = [
            "{}", "null", #""iPhone""#, #"{"platform":"iOS"}"#, #"{"model":"x"}"#, #"{"platform":"","model":"x"}"#, #"{"platform":"iOS","model":""}"#,
            #"{"platform":null,"model":"x"}"#, #"{"platform":"iOS","model":15}"#, #"{"platform":"iOS","model":"x","osVersion":17}"#,
        ]
        for info in badInfos { #expect(outcome(pair(device, info)) == Self.invalidOpen, "\(info)") }
        #expect(outcome(#"{"type":"pair_request","protocolVersion":1,"deviceId":"\#(device)"}"#) == Self.invalidOpen, "no deviceInfo")
        let long = String(repeating: "é", count: 33)
        #expect(outcome(pair(device, good, name: #""claimedName":"\#(long)","#)) == Self.invalidOpen, "66 bytes")
        #expect(outcome(pair(device, good, name: #""claimedName":"\#(String(repeating: "é", count: 32))","#)) == .decoded, "64 bytes")
        guard case .success(.pairRequest(let request)) = ClientFrame.decode(pair(device, good, name: #""claimedName":null,"#)) else {
            Issue.record("valid pair_request refused")
            return
        }
        #expect(request.deviceId == device && request.claimedName == nil && request.deviceInfo["platform"] == .string("iOS"))
    }

    @Test func authCursorRules() {
        let base = #"{"type":"auth","protocolVersion":1,"token":"t","deviceId":"\#(device)""#
        let plain = ClientFrame.auth(.init(token: "t", deviceId: device, lastMessageId: nil))
        #expect(ClientFrame.decode(base + "}") == .success(plain))
        #expect(ClientFrame.decode(base + #","lastMessageId":null}"#) == .success(plain))
        #expect(ClientFrame.decode(base + #","lastMessageId":"s_1"}"#) == .success(.auth(.init(token: "t", deviceId: device, lastMessageId: "s_1"))))
        #expect(outcome(base + #","lastMessageId":""}"#) == Self.invalidOpen)
        #expect(outcome(base + #","lastMessageId":"  "}"#) == Self.invalidOpen)
        #expect(outcome(base + #","lastMessageId":5}"#) == Self.invalidOpen)
        #expect(outcome(#"{"type":"auth","protocolVersion":1,"deviceId":"x"}"#) == Self.invalidOpen, "no token")
        #expect(outcome(#"{"type":"auth","protocolVersion":1,"token":"t"}"#) == Self.invalidOpen, "no deviceId")
    }

    @Test func messageIdAndContentRules() throws {
        for id in [#""s_123""#, #""x_123""#, #""123""#, #""""#, "null", "42", #""c_""#] {
            #expect(outcome(#"{"type":"message","id":\#(id),"content":"hi"}"#) == Self.invalidOpen, "\(id)")
        }
        #expect(outcome(#"{"type":"message","content":"hi"}"#) == Self.invalidOpen)
        for content in [#""""#, "null", "42"] {
            #expect(outcome(#"{"type":"message","id":"c_1","content":\#(content)}"#) == Self.invalidOpen, "\(content)")
        }
        #expect(outcome(#"{"type":"message","id":"c_1"}"#) == Self.invalidOpen)
        #expect(ClientFrame.decode(#"{"type":"message","id":"c_1","content":"hi","extra":1}"#) == .success(.message(.init(id: "c_1", content: "hi"))))
        for attachments in [#""image""#, #"{"type":"image"}"#, "5"] {
            guard
                case .failure(.refused(let error)) = ClientFrame.decode(#"{"type":"message","id":"c_1","content":"x","attachments":\#(attachments)}"#)
            else {
                Issue.record("attachments \(attachments) accepted")
                continue
            }
            #expect(error.code == .invalidMessage && error.messageId == "c_1" && !error.closes)
        }
        #expect(
            ClientFrame.decode(#"{"type":"message","id":"c_1","content":"x","attachments":null,"channelType":null}"#)
                == .success(.message(.init(id: "c_1", content: "x")))
        )
        #expect(outcome(#"{"type":"message","id":"c_1","content":"x","channelType":"team"}"#) == Self.invalidOpen)
        let admin = ClientFrame.decode(#"{"type":"message","id":"c_1","content":"x","channelType":"admin"}"#)
        #expect(admin == .success(.message(.init(id: "c_1", content: "x", channelType: .admin))))
        let id = String(repeating: "x", count: 127)
        #expect(outcome(#"{"type":"message","id":"c_\#(id)","content":"x"}"#) == Self.invalidOpen, "longer than 128 bytes")
    }

    @Test func typingRules() {
        #expect(ClientFrame.decode(#"{"type":"typing","active":true}"#) == .success(.typing(.init(active: true))))
        for text in [#"{"type":"typing","active":true,"role":"assistant"}"#, #"{"type":"typing","active":true,"role":"user"}"#] {
            #expect(outcome(text) == Self.invalidOpen, "a client's typing carries no role")
        }
        #expect(outcome(#"{"type":"typing"}"#) == Self.invalidOpen)
        #expect(outcome(#"{"type":"typing","active":"yes"}"#) == Self.invalidOpen)
    }

    @Test func pairDecisionRules() {
        let user = Identifiers.newUUID()
        for userID in ["", "not-a-uuid", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"] {
            #expect(outcome(#"{"type":"pair_decision","deviceId":"\#(device)","approve":true,"userId":"\#(userID)"}"#) == Self.invalidOpen)
        }
        #expect(outcome(#"{"type":"pair_decision","deviceId":"\#(device)","approve":true}"#) == Self.invalidOpen, "approving needs a user")
        #expect(outcome(#"{"type":"pair_decision","deviceId":"\#(device)","approve":true,"userId":null}"#) == Self.invalidOpen)
        #expect(
            ClientFrame.decode(#"{"type":"pair_decision","deviceId":"\#(device)","approve":false}"#)
                == .success(.pairDecision(.init(deviceId: device, approve: false, userId: nil)))
        )
        #expect(
            ClientFrame.decode(#"{"type":"pair_decision","deviceId":"\#(device)","approve":true,"userId":"\#(user)"}"#)
                == .success(.pairDecision(.init(deviceId: device, approve: true, userId: user)))
        )
    }

    /// Every frame the `Codable` form encodes is read back as it was, by the listener's decoder
    /// and by JSONDecoder alike: one model for both ends.
    @Test func theCodableFormAndTheDecoderAgree() throws {
        let info = ClientFrame.PairRequest.deviceInfo(platform: "linux", model: "clawrelay", appVersion: "0.4.0")
        let frames: [ClientFrame] = [
            .pairRequest(.init(deviceId: device, claimedName: "studio \"quoted\"", deviceInfo: info)),
            .pairRequest(.init(deviceId: device, claimedName: nil, deviceInfo: info)),
            .pairDecision(.init(deviceId: device, approve: true, userId: Identifiers.newUUID())),
            .pairDecision(.init(deviceId: device, approve: false, userId: nil)),
            .auth(.init(token: "a.b.c", deviceId: device, lastMessageId: "s_9")),
            .auth(.init(token: "a.b.c", deviceId: device, lastMessageId: nil)),
            .message(.init(id: "c_1", content: "a \"quoted\" line\n é 🎉")),
            .message(
                .init(id: "c_2", content: "x", attachments: [.object(["type": .string("asset"), "assetId": .string("a_1")])], channelType: .admin)
            ),
            .typing(.init(active: false)),
        ]
        for frame in frames {
            let text = frame.encoded()
            #expect(ClientFrame.decode(text) == .success(frame), "\(text)")
            #expect(try JSONDecoder().decode(ClientFrame.self, from: Data(text.utf8)) == frame, "\(text)")
            #expect(JSONValue.parse(text)?["type"]?.stringValue == frame.type)
        }
        #expect(JSONValue.parse(ClientFrame.auth(.init(token: "t", deviceId: device, lastMessageId: nil)).encoded())?["lastMessageId"] == nil)
    }
}
