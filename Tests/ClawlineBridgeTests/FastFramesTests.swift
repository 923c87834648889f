import ClawlineWire
import RelayCore
import Testing

@testable import ClawlineBridge

/// `FastFrames` writes the hot frames by hand: they must be exactly what the `Codable` model
/// encodes. JSONEncoder orders keys as it likes, so each side is put in one canonical order (keys
/// sorted, every value's bytes kept as written) and the two compared byte for byte; FastFrames'
/// own key order is fixed and checked as well.
@Suite struct FastFramesTests {
    static let awkward = "quote \" backslash \\ slash / line\n return\r tab\t backspace\u{8} feed\u{C} nul\u{0} unit\u{1F} del\u{7F}"
    static let unicode = "é 🎉 中文 \u{2028}\u{2029} ﷽"

    func event(
        _ id: String,
        role: ChatRole,
        content: String,
        owner: String = "u",
        deviceID: String? = nil,
        attachments: String? = nil,
        timestamp: Int64 = 1_700_000_000_123
    ) -> ChatEvent {
        ChatEvent(
            id: id,
            seq: 1,
            userID: owner,
            conversationID: "cv",
            role: role,
            content: content,
            timestampMillis: timestamp,
            deviceID: deviceID,
            attachmentsJSON: attachments
        )
    }

    /// `fast` in canonical order equals the model's sorted-keys encoding, byte for byte, and both
    /// read as the same JSON.
    func expectSame(_ fast: [UInt8], _ frame: ServerFrame, keys: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let members = try #require(Self.members(fast), "not a flat JSON object: \(String(decoding: fast, as: UTF8.self))")
        #expect(members.map(\.key) == keys, "FastFrames' key order", sourceLocation: sourceLocation)
        let canonical =
            "{" + members.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\(String(decoding: $0.value, as: UTF8.self))" }.joined(separator: ",") + "}"
        #expect(canonical == FrameEncoder.encode(frame, sorted: true), sourceLocation: sourceLocation)
        #expect(JSONValue.parse(fast) == JSONValue.parse(frame.encoded()), sourceLocation: sourceLocation)
    }

    static let messageKeys = ["type", "id", "role", "content", "timestamp", "streaming"]

    @Test(arguments: [awkward, unicode, "plain text", String(repeating: "long ", count: 5_000)])
    func aUserEchoAndAnAssistantFinal(_ content: String) throws {
        let echo = event("s_1", role: .user, content: content, deviceID: "d-\"1\"")
        try expectSame(
            FastFrames.message(echo),
            .message(ServerFrame.Message(echo)),
            keys: Self.messageKeys + ["deviceId", "attachments", "channelType"]
        )
        let final = event("s_2", role: .assistant, content: content, deviceID: "ignored", timestamp: -5)
        try expectSame(FastFrames.message(final), .message(ServerFrame.Message(final)), keys: Self.messageKeys + ["attachments", "channelType"])
    }

    @Test func attachmentsOnBothChannels() throws {
        let stored =
            #"[{"type":"image","mimeType":"image/png","data":"iVBO+w0K/GgoA=="},{"type":"asset","assetId":"a_1"},{"type":"url","url":"https://x/y?a=1&b=\"2\""}]"#
        for owner in ["u", ClawlineChannel.adminAudience] {
            let echo = event("s_9", role: .user, content: Self.unicode, owner: owner, deviceID: "d1", attachments: stored)
            let keys = Self.messageKeys + ["deviceId", "attachments", "channelType"]
            try expectSame(FastFrames.message(echo), .message(ServerFrame.Message(echo)), keys: keys)
            let frame = try #require(JSONValue.parse(FastFrames.message(echo)))
            #expect(frame["channelType"]?.stringValue == (owner == "u" ? "personal" : "admin"))
            let attachments = try #require(frame["attachments"]?.arrayValue)
            #expect(attachments.map { $0["id"]?.stringValue } == ["s_9-0", "s_9-1", "s_9-2"], "the same ids in every replay")
            #expect(attachments.map { $0["type"]?.stringValue } == ["image", "asset", "document"], "only types the app knows")
            #expect(attachments[2]["url"]?.stringValue == #"https://x/y?a=1&b="2""#)
        }
        let none = event("s_10", role: .user, content: "x", deviceID: "d1", attachments: "[]")
        #expect(JSONValue.parse(FastFrames.message(none))?["attachments"] == .array([]))
    }

    @Test(arguments: [ClawlineChannel.personal, .admin])
    func streamingTypingAndAck(_ channel: ClawlineChannel) throws {
        for content in [Self.awkward, Self.unicode, ""] {
            let update = ServerFrame.Message(id: "s_3", role: "assistant", content: content, timestamp: 42, streaming: true, channelType: channel)
            try expectSame(
                FastFrames.streaming(id: "s_3", content: content, timestamp: 42, channel: channel),
                .message(update),
                keys: Self.messageKeys + ["channelType"]
            )
        }
        for active in [true, false] {
            try expectSame(
                FastFrames.typing(active, channel: channel),
                .typing(.init(active: active, channelType: channel)),
                keys: ["type", "role", "active", "channelType"]
            )
        }
        try expectSame(FastFrames.ack("c_\(Self.awkward)"), .ack(.init(id: "c_\(Self.awkward)")), keys: ["type", "id"])
    }

    /// The members of a compact JSON object in the order written, each value's bytes as written.
    static func members(_ bytes: [UInt8]) -> [(key: String, value: ArraySlice<UInt8>)]? {
        let (quote, backslash) = (UInt8(ascii: "\""), UInt8(ascii: "\\"))
        guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else { return nil }
        func stringEnd(from start: Int) -> Int {
            var index = start + 1
            while index < bytes.count, bytes[index] != quote { index += bytes[index] == backslash ? 2 : 1 }
            return index
        }
        var members: [(key: String, value: ArraySlice<UInt8>)] = []
        var index = 1
        let end = bytes.count - 1
        while index < end {
            guard bytes[index] == quote else { return nil }
            let keyEnd = stringEnd(from: index)
            guard keyEnd + 1 < end, let key = JSONValue.parse(Array(bytes[index...keyEnd]))?.stringValue, bytes[keyEnd + 1] == UInt8(ascii: ":")
            else {
                return nil
            }
            index = keyEnd + 2
            let start = index
            var depth = 0
            scan: while index < end {
                switch bytes[index] {
                case quote: index = stringEnd(from: index)
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                case UInt8(ascii: ",") where depth == 0: break scan
                default: break
                }
                index += 1
            }
            members.append((key, bytes[start..<index]))
            index += 1
        }
        return members
    }
}
