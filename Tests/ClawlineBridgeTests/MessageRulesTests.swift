import ClawlineWire
import Foundation
import RelayCore
import Testing

@Suite struct MessageRulesTests {
    func image(_ bytes: Int, mime: String = "image/png") -> JSONValue {
        .object(["type": .string("image"), "mimeType": .string(mime), "data": .string(Data(count: bytes).base64EncodedString())])
    }

    func code(_ result: Result<MessageRules.Validated, ClawlineError>) -> ClawlineErrorCode? {
        if case .failure(let error) = result { return error.code }
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
