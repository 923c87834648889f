import Foundation
import RelayCore
import Testing

@testable import ClawlineBridge

@Suite struct MessageRulesTests {
    func image(_ bytes: Int, mime: String = "image/png") -> JSONValue {
        .object(["type": .string("image"), "mimeType": .string(mime), "data": .string(Data(count: bytes).base64EncodedString())])
    }

    func code(_ result: Result<MessageRules.Validated, FrameRejection>) -> ClawlineErrorCode? {
        if case .failure(let rejection) = result, case .error(let code, _) = rejection.action { return code }
        return nil
    }

    @Test func contentLimitIs64KiB() {
        #expect(code(MessageRules.validate(clientID: "c_1", content: String(repeating: "a", count: 65_536), attachments: [])) == nil)
        #expect(code(MessageRules.validate(clientID: "c_1", content: String(repeating: "a", count: 65_537), attachments: [])) == .payloadTooLarge)
    }

    @Test func inlineLimits() {
        #expect(code(MessageRules.validate(clientID: "c", content: "x", attachments: [image(256 * 1024)])) == nil)
        #expect(code(MessageRules.validate(clientID: "c", content: "x", attachments: [image(256 * 1024 + 1)])) == .payloadTooLarge)
        #expect(code(MessageRules.validate(clientID: "c", content: "x", attachments: [image(200 * 1024), image(100 * 1024)])) == .payloadTooLarge)
        #expect(code(MessageRules.validate(clientID: "c", content: "x", attachments: Array(repeating: image(10), count: 5))) == .payloadTooLarge)
        let bigText = String(repeating: "a", count: 65_536)
        #expect(code(MessageRules.validate(clientID: "c", content: bigText, attachments: [image(256 * 1024)])) == nil)
    }

    @Test func shapeRules() {
        #expect(code(MessageRules.validate(clientID: "c", content: "x", attachments: [image(10, mime: "image/tiff")])) == .invalidMessage)
        #expect(code(MessageRules.validate(clientID: "c", content: "x", attachments: [.null])) == .invalidMessage)
        #expect(code(MessageRules.validate(clientID: "c", content: "x", attachments: [.object(["type": .string("video")])])) == .invalidMessage)
        let badBase64 = JSONValue.object(["type": .string("image"), "mimeType": .string("image/png"), "data": .string("!!!")])
        #expect(code(MessageRules.validate(clientID: "c", content: "x", attachments: [badBase64])) == .invalidMessage)
    }

    @Test func hashComparesDecodedBytesAndOrder() {
        let spaced = JSONValue.object(["type": .string("image"), "mimeType": .string("image/png"), "data": .string("AAEC\nAw")])
        let plain = JSONValue.object(["type": .string("image"), "mimeType": .string("image/png"), "data": .string("AAECAw==")])
        #expect(MessageRules.attachmentsHash([spaced]) == MessageRules.attachmentsHash([plain]))
        let asset = JSONValue.object(["type": .string("asset"), "assetId": .string("a_1")])
        #expect(MessageRules.attachmentsHash([plain, asset]) != MessageRules.attachmentsHash([asset, plain]))
        #expect(MessageRules.attachmentsHash([]) != MessageRules.attachmentsHash([asset]))
    }

    @Test func multipartFindsTheFilePart() throws {
        let body =
            "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\nPNGDATA\r\n--XyZ--\r\n"
        let form = try #require(MultipartForm.parse(Data(body.utf8), boundary: "XyZ"))
        #expect(form.parts.count == 1)
        #expect(form.parts[0].name == "file")
        #expect(form.parts[0].contentType == "image/png")
        #expect(Data(body.utf8).subdata(in: form.parts[0].range) == Data("PNGDATA".utf8))
        #expect(MultipartForm.boundary(fromContentType: "multipart/form-data; boundary=\"XyZ\"") == "XyZ")
        #expect(MultipartForm.parse(Data("garbage".utf8), boundary: "XyZ") == nil)
    }
}

@Suite struct FastFramesTests {
    @Test func hotFramesMatchTheEncoder() throws {
        let event = ChatEvent(
            id: "s_1",
            seq: 1,
            userID: "u",
            conversationID: "main",
            role: .user,
            content: "quote \" slash \\ line\n tab\t bell\u{7} é 🎉",
            timestampMillis: 42,
            deviceID: "d1",
            attachmentsJSON: nil
        )
        let fast = try #require(JSONValue.parse(FastFrames.message(event)))
        let slow = try #require(JSONValue.parse(FrameEncoder.encode(ServerFrame.message(event))))
        #expect(fast == slow)
        let assistant = ChatEvent(
            id: "s_2",
            seq: 2,
            userID: "u",
            conversationID: "main",
            role: .assistant,
            content: "hi",
            timestampMillis: 43,
            deviceID: nil,
            attachmentsJSON: nil
        )
        #expect(JSONValue.parse(FastFrames.message(assistant)) == JSONValue.parse(FrameEncoder.encode(ServerFrame.message(assistant))))
        let plain = ChatEvent(
            id: "s_3",
            seq: 3,
            userID: "u",
            conversationID: "main",
            role: .assistant,
            content: "no escapes: é 🎉 中文",
            timestampMillis: -5,
            deviceID: nil,
            attachmentsJSON: nil
        )
        #expect(JSONValue.parse(FastFrames.message(plain)) == JSONValue.parse(FrameEncoder.encode(ServerFrame.message(plain))))
        let streaming = try #require(
            JSONValue.parse(FastFrames.streaming(id: "s_4", content: "a\u{1F}b", timestamp: 1_700_000_000_000, channel: .personal))
        )
        #expect(streaming["content"]?.stringValue == "a\u{1F}b" && streaming["streaming"]?.boolValue == true)
        #expect(streaming["timestamp"]?.intValue == 1_700_000_000_000)
        #expect(JSONValue.parse(FastFrames.ack("c_\"x")) == JSONValue.parse(FrameEncoder.encode(ServerFrame.Ack(id: "c_\"x"))))
        #expect(
            JSONValue.parse(FastFrames.typing(true, channel: .admin))
                == JSONValue.parse(FrameEncoder.encode(ServerFrame.Typing(active: true, channelType: "admin")))
        )
    }

    @Test func attachmentsCarryStableIdsAndOnlyTypesTheAppKnows() throws {
        let stored = #"[{"type":"image","mimeType":"image/png","data":"AAECAw=="},{"type":"asset","assetId":"a_1"},{"type":"url","url":"https://x"}]"#
        let event = ChatEvent(
            id: "s_9",
            seq: 9,
            userID: ClawlineChannel.adminAudience,
            conversationID: "cv",
            role: .user,
            content: "look",
            timestampMillis: 1,
            deviceID: "d1",
            attachmentsJSON: stored
        )
        let frame = try #require(JSONValue.parse(FastFrames.message(event)))
        #expect(frame == JSONValue.parse(FrameEncoder.encode(ServerFrame.message(event))))
        #expect(frame["channelType"]?.stringValue == "admin")
        let attachments = try #require(frame["attachments"]?.arrayValue)
        #expect(attachments.map { $0["id"]?.stringValue } == ["s_9-0", "s_9-1", "s_9-2"])
        #expect(attachments.map { $0["type"]?.stringValue } == ["image", "asset", "document"])
        #expect(attachments[2]["url"]?.stringValue == "https://x")
        // The same event encodes the same ids every time (replay included).
        #expect(JSONValue.parse(FastFrames.message(event)) == frame)
    }
}
