import ClawlineWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import ClawlineBridge

/// Message attachments over the listener in memory: inline image limits and validation, asset
/// references, and how a retry's attachments are compared.
@Suite struct ClawlineAttachmentTests {
    typealias Bed = ClawlineTestbed
    static let kb = 1024

    /// An admin socket that may send as many messages as it likes.
    func setup() throws -> (Bed, Bed.Device, TestSocket) {
        var settings = ClawlineSettings()
        settings.messagesPerSecond = 1000
        let bed = Bed(settings: settings)
        let (admin, socket) = try bed.setupAdmin()
        return (bed, admin, socket)
    }

    static func image(_ bytes: [UInt8], mime: JSONValue = .string("image/png")) -> JSONValue {
        .object(["type": .string("image"), "mimeType": mime, "data": .string(Data(bytes).base64EncodedString())])
    }

    static func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }
    static let pixel = Array(Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")!)

    /// The message's ack, or the code it was refused with (the socket stays open).
    func outcome(_ socket: TestSocket, _ attachments: [JSONValue]?, content: String = "img", id: String = Bed.newClientID()) -> String? {
        let frames = socket.exchange(Bed.message(content, id: id, attachments: attachments))
        if frames.ackIDs == [id] { return "ack" }
        let error = frames.ofType("error").first
        #expect(error?["messageId"]?.stringValue == id || error == nil)
        return error?["code"]?.stringValue
    }

    @Test func anImageOf256KIsAcceptedAndEchoedAsSent() throws {
        let (_, _, socket) = try setup()
        let raw = Self.random(256 * Self.kb)
        let frames = socket.exchange(Bed.message("picture", attachments: [Self.image(raw, mime: .string("image/jpeg"))]))
        let echoed = try #require(frames.first { $0.isUserEcho }?["attachments"]?.arrayValue)
        #expect(echoed.count == 1 && echoed[0]["type"]?.stringValue == "image" && echoed[0]["mimeType"]?.stringValue == "image/jpeg")
        #expect(echoed[0]["data"]?.stringValue.flatMap { Data(base64Encoded: $0) } == Data(raw))
    }

    @Test(arguments: [[256 * kb + 1], [130 * kb, 130 * kb]])
    func inlineBytesOver256KArePayloadTooLarge(_ sizes: [Int]) throws {
        let (_, _, socket) = try setup()
        #expect(outcome(socket, sizes.map { Self.image(Self.random($0)) }) == "payload_too_large")
        socket.expectOpen()
    }

    @Test func fourAttachmentsFitFiveDoNotAssetsIncluded() throws {
        let (bed, admin, socket) = try setup()
        #expect(outcome(socket, Array(repeating: Self.image(Self.pixel), count: 4)) == "ack")
        #expect(outcome(socket, Array(repeating: Self.image(Self.pixel), count: 5)) == "payload_too_large")
        let assets = (0..<2).map { _ in JSONValue.object(["type": .string("asset"), "assetId": .string(bed.storeAsset(of: admin.userID))]) }
        #expect(outcome(socket, Array(repeating: Self.image(Self.pixel), count: 3) + assets) == "payload_too_large")
    }

    @Test func a64KTextWithA256KImageFits320K() throws {
        let (_, _, socket) = try setup()
        #expect(outcome(socket, [Self.image(Self.random(256 * Self.kb))], content: String(repeating: "x", count: 64 * Self.kb)) == "ack")
    }

    @Test func theFiveImageTypesAreTakenAndNoOther() throws {
        let (_, _, socket) = try setup()
        for mime in ["image/png", "image/jpeg", "image/gif", "image/webp", "image/heic"] {
            #expect(outcome(socket, [Self.image(Self.pixel, mime: .string(mime))]) == "ack", "\(mime)")
        }
        for mime in [JSONValue.string("image/bmp"), .string("text/plain"), .string("application/octet-stream"), .string(""), .null, .string("IMAGE")]
        {
            #expect(outcome(socket, [Self.image(Self.pixel, mime: mime)]) == "invalid_message", "\(mime)")
        }
        socket.expectOpen()
    }

    @Test func badInlineDataAndMalformedEntriesAreInvalid() throws {
        let (_, _, socket) = try setup()
        for data in [JSONValue.string("!!!not base64!!!"), .string("abc$"), .string(""), .null, .int(12)] {
            #expect(outcome(socket, [.object(["type": .string("image"), "mimeType": .string("image/png"), "data": data])]) == "invalid_message")
        }
        let entries: [JSONValue] = [
            .null, .string("image"), .int(3), .array([]),
            .object(["type": .string("video"), "mimeType": .string("video/mp4"), "data": .string("AAAA")]),
            .object(["mimeType": .string("image/png"), "data": .string("AAAA")]), .object(["type": .string("image"), "data": .string("AAAA")]),
            .object(["type": .string("asset")]), .object(["type": .string("asset"), "assetId": .string("")]),
        ]
        for entry in entries { #expect(outcome(socket, [entry]) == "invalid_message", "\(entry)") }
        for value in [JSONValue.string("image"), .object(["type": .string("image")]), .int(5)] {
            let id = Bed.newClientID()
            let frame = JSONValue.object(["type": .string("message"), "id": .string(id), "content": .string("bad"), "attachments": value])
            #expect(socket.exchange(frame).errorCodes == ["invalid_message"], "attachments must be an array")
        }
        socket.expectOpen()
    }

    @Test func base64WithWhitespaceOrWithoutPaddingIsTakenAndStoredStrict() throws {
        let (_, _, socket) = try setup()
        let encoded = Data([0x89, 0x50, 0x4E, 0x47] + Self.random(61)).base64EncodedString()
        #expect(encoded.hasSuffix("="))
        let chunked = stride(from: 0, to: encoded.count, by: 16).map { String(Array(encoded)[$0..<min($0 + 16, encoded.count)]) }.joined(
            separator: "\n"
        )
        for data in [String(encoded.dropLast()), chunked] {
            let frames = socket.exchange(
                Bed.message("img", attachments: [.object(["type": .string("image"), "mimeType": .string("image/png"), "data": .string(data)])])
            )
            #expect(frames.first { $0.isUserEcho }?["attachments"]?.arrayValue?.first?["data"]?.stringValue == encoded, "stored strict")
        }
    }

    @Test func anAssetReferenceIsEchoedWithItsIDAndOnlyTheUsersOwnAreTaken() throws {
        let (bed, admin, socket) = try setup()
        let asset = bed.storeAsset(of: admin.userID)
        let frames = socket.exchange(Bed.message("see asset", attachments: [.object(["type": .string("asset"), "assetId": .string(asset)])]))
        let echo = try #require(frames.first { $0.isUserEcho })
        let id = try #require(echo["id"]?.stringValue)
        #expect(echo["attachments"] == .array([.object(["id": .string("\(id)-0"), "type": .string("asset"), "assetId": .string(asset)])]))
        #expect(outcome(socket, [.object(["type": .string("asset"), "assetId": .string("a_\(UUID())")])]) == "asset_not_found")
        let foreign = bed.storeAsset(of: Bed.newDeviceID())
        #expect(outcome(socket, [.object(["type": .string("asset"), "assetId": .string(foreign)])]) == "asset_not_found")
        socket.expectOpen()
    }

    @Test func aRetryMustCarryTheSameAttachments() throws {
        let (_, _, socket) = try setup()
        let id = Bed.newClientID()
        #expect(outcome(socket, [Self.image(Self.pixel)], content: "with image", id: id) == "ack")
        #expect(outcome(socket, [Self.image(Self.pixel + [0])], content: "with image", id: id) == "invalid_message")
        #expect(outcome(socket, [], content: "with image", id: id) == "invalid_message")
        let plain = Bed.newClientID()
        for attachments in [[], nil] as [[JSONValue]?] { #expect(outcome(socket, attachments, content: "plain", id: plain) == "ack") }
        let frame = JSONValue.object(["type": .string("message"), "id": .string(plain), "content": .string("plain"), "attachments": .null])
        #expect(socket.exchange(frame).ackIDs == [plain])
    }

    @Test func aURLAttachmentIsRefusedPointingAtAssets() throws {
        let (_, _, socket) = try setup()
        let id = Bed.newClientID()
        let frames = socket.exchange(Bed.message("link", id: id, attachments: [.object(["type": .string("url"), "url": .string("https://x")])]))
        let error = try #require(frames.ofType("error").first)
        #expect(error["code"]?.stringValue == "invalid_message" && error["messageId"]?.stringValue == id)
        #expect(error["message"]?.stringValue?.contains("asset") == true)
        socket.expectOpen()
    }
}
