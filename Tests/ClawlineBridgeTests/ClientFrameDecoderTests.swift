import RelayCore
import Testing

@testable import ClawlineBridge

@Suite struct ClientFrameDecoderTests {
    let device = "0f0e8a3c-6a6b-4c1d-9e2f-1a2b3c4d5e6f"

    func action(_ text: String) -> FrameRejection.Action? {
        if case .failure(let rejection) = ClientFrameDecoder.decode(text) { return rejection.action }
        return nil
    }

    @Test func malformedJSONClosesSilently() {
        #expect(action("{not json") == .closeSilently)
    }

    @Test func missingOrUnknownTypeIsInvalidButOpen() {
        #expect(action("{}") == .error(.invalidMessage, close: false))
        #expect(action(#"{"type":"cancel"}"#) == .error(.invalidMessage, close: false))
        #expect(action("[1]") == .error(.invalidMessage, close: false))
    }

    @Test(arguments: [#""protocolVersion":2,"#, #""protocolVersion":"1","#, #""protocolVersion":null,"#, #""protocolVersion":1.5,"#, ""])
    func badProtocolVersionClosesTheSocket(_ version: String) {
        let pair = #"{"type":"pair_request",\#(version)"deviceId":"\#(device)","deviceInfo":{"platform":"iOS","model":"x"}}"#
        #expect(action(pair) == .error(.invalidMessage, close: true))
        let auth = #"{"type":"auth",\#(version)"token":"t","deviceId":"\#(device)"}"#
        #expect(action(auth) == .error(.invalidMessage, close: true))
    }

    @Test func pairRequestFieldRules() {
        func pair(_ id: String, _ info: String, name: String = "") -> String {
            #"{"type":"pair_request","protocolVersion":1,"deviceId":"\#(id)",\#(name)"deviceInfo":\#(info)}"#
        }
        #expect(action(pair("ABC123", #"{"platform":"iOS","model":"x"}"#)) == .error(.invalidMessage, close: false))
        #expect(action(pair(device, "{}")) == .error(.invalidMessage, close: false))
        #expect(action(pair(device, "null")) == .error(.invalidMessage, close: false))
        #expect(action(pair(device, #"{"platform":"","model":"x"}"#)) == .error(.invalidMessage, close: false))
        let long = String(repeating: "é", count: 33)
        #expect(
            action(pair(device, #"{"platform":"iOS","model":"x"}"#, name: #""claimedName":"\#(long)","#)) == .error(.invalidMessage, close: false)
        )
        guard case .success(.pairRequest(let request)) = ClientFrameDecoder.decode(pair(device, #"{"platform":"iOS","model":"x"}"#)) else {
            Issue.record("valid pair_request refused")
            return
        }
        #expect(request.deviceID == device)
    }

    @Test func authCursorRules() {
        let base = #"{"type":"auth","protocolVersion":1,"token":"t","deviceId":"\#(device)""#
        #expect(ClientFrameDecoder.decode(base + "}") == .success(.auth(token: "t", deviceID: device, lastMessageID: nil)))
        #expect(ClientFrameDecoder.decode(base + #","lastMessageId":null}"#) == .success(.auth(token: "t", deviceID: device, lastMessageID: nil)))
        #expect(action(base + #","lastMessageId":""}"#) == .error(.invalidMessage, close: false))
        #expect(action(base + #","lastMessageId":"  "}"#) == .error(.invalidMessage, close: false))
        #expect(action(#"{"type":"auth","protocolVersion":1,"deviceId":"x"}"#) == .error(.invalidMessage, close: false))
    }

    @Test func messageIdAndContentRules() {
        #expect(action(#"{"type":"message","content":"hi"}"#) == .error(.invalidMessage, close: false))
        #expect(action(#"{"type":"message","id":"s_1","content":"hi"}"#) == .error(.invalidMessage, close: false))
        #expect(action(#"{"type":"message","id":"x_1","content":"hi"}"#) == .error(.invalidMessage, close: false))
        #expect(action(#"{"type":"message","id":"c_1","content":""}"#) == .error(.invalidMessage, close: false))
        #expect(action(#"{"type":"message","id":"c_1"}"#) == .error(.invalidMessage, close: false))
        #expect(
            ClientFrameDecoder.decode(#"{"type":"message","id":"c_1","content":"hi","extra":1}"#)
                == .success(.message(.init(clientID: "c_1", content: "hi", attachments: [])))
        )
    }

    @Test func typingRules() {
        #expect(ClientFrameDecoder.decode(#"{"type":"typing","active":true}"#) == .success(.typing(active: true)))
        #expect(action(#"{"type":"typing","active":true,"role":"assistant"}"#) == .error(.invalidMessage, close: false))
        #expect(action(#"{"type":"typing"}"#) == .error(.invalidMessage, close: false))
    }

    @Test func pairDecisionRules() {
        let user = Identifiers.newUUID()
        #expect(action(#"{"type":"pair_decision","deviceId":"\#(device)","approve":true}"#) == .error(.invalidMessage, close: false))
        #expect(action(#"{"type":"pair_decision","deviceId":"\#(device)","approve":true,"userId":""}"#) == .error(.invalidMessage, close: false))
        #expect(
            ClientFrameDecoder.decode(#"{"type":"pair_decision","deviceId":"\#(device)","approve":false}"#)
                == .success(.pairDecision(deviceID: device, approve: false, userID: nil))
        )
        #expect(
            ClientFrameDecoder.decode(#"{"type":"pair_decision","deviceId":"\#(device)","approve":true,"userId":"\#(user)"}"#)
                == .success(.pairDecision(deviceID: device, approve: true, userID: user))
        )
    }
}
