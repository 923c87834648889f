/// Hand-written JSON for the frames on the hot path (`ack`, and every chat message, streaming
/// update and typing change), byte for byte what `ServerFrame`'s `Codable` form encodes with its
/// keys in this order, without JSONEncoder's cost.
public enum FastFrames {
    public static func typing(_ active: Bool, channel: ClawlineChannel) -> [UInt8] {
        Array(#"{"type":"typing","role":"assistant","active":\#(active),"channelType":"\#(channel.rawValue)"}"#.utf8)
    }

    public static func ack(_ id: String) -> [UInt8] {
        var out = Array(#"{"type":"ack","id":"#.utf8)
        appendString(id, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A stored event; `attachments` is its JSON array (`AttachmentWire.json`).
    public static func message(
        id: String,
        role: String,
        content: String,
        timestamp: Int64,
        deviceId: String?,
        attachments: String,
        channel: ClawlineChannel
    ) -> [UInt8] {
        var out = header(id: id, role: role, content: content, timestamp: timestamp, streaming: false)
        if let deviceId {
            out.append(contentsOf: #","deviceId":"#.utf8)
            appendString(deviceId, to: &out)
        }
        out.append(contentsOf: #","attachments":"#.utf8)
        out.append(contentsOf: attachments.utf8)
        return finish(&out, channel: channel)
    }

    /// An assistant update with the full content so far.
    public static func streaming(id: String, content: String, timestamp: Int64, channel: ClawlineChannel) -> [UInt8] {
        var out = header(id: id, role: "assistant", content: content, timestamp: timestamp, streaming: true)
        return finish(&out, channel: channel)
    }

    private static func finish(_ out: inout [UInt8], channel: ClawlineChannel) -> [UInt8] {
        out.append(contentsOf: #","channelType":""#.utf8)
        out.append(contentsOf: channel.rawValue.utf8)
        out.append(contentsOf: #""}"#.utf8)
        return out
    }

    private static func header(id: String, role: String, content: String, timestamp: Int64, streaming: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(content.utf8.count + 160)
        out.append(contentsOf: #"{"type":"message","id":"#.utf8)
        appendString(id, to: &out)
        out.append(contentsOf: #","role":"#.utf8)
        appendString(role, to: &out)
        out.append(contentsOf: #","content":"#.utf8)
        appendString(content, to: &out)
        out.append(contentsOf: #","timestamp":"#.utf8)
        out.append(contentsOf: String(timestamp).utf8)  // a small string: no allocation
        out.append(contentsOf: streaming ? #","streaming":true"#.utf8 : #","streaming":false"#.utf8)
        return out
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string literal, escaped as JSONEncoder escapes it. Most text needs
    /// no escape: it is copied in one go.
    public static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out.append(contentsOf: text.utf8)
        } else {
            for byte in text.utf8 { appendEscaped(byte, to: &out) }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
        case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
        case 0x08: out.append(contentsOf: #"\b"#.utf8)
        case 0x09: out.append(contentsOf: #"\t"#.utf8)
        case 0x0A: out.append(contentsOf: #"\n"#.utf8)
        case 0x0C: out.append(contentsOf: #"\f"#.utf8)
        case 0x0D: out.append(contentsOf: #"\r"#.utf8)
        case 0..<0x20:
            out.append(contentsOf: #"\u00"#.utf8)
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0xF)])
        default: out.append(byte)
        }
    }
}
