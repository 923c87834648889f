import RelayCore

/// Hand-written JSON for the frames on the hot path (every chat message and streaming update),
/// byte-for-byte the same shape `ServerFrame` would produce, without JSONEncoder's cost.
enum FastFrames {
    static func typing(_ active: Bool, channel: ClawlineChannel) -> [UInt8] {
        Array(#"{"type":"typing","role":"assistant","active":\#(active),"channelType":"\#(channel.rawValue)"}"#.utf8)
    }

    static func ack(_ id: String) -> [UInt8] {
        var out = Array(#"{"type":"ack","id":"#.utf8)
        appendString(id, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    static func message(_ event: ChatEvent) -> [UInt8] {
        var out = header(id: event.id, role: event.role.rawValue, content: event.content, timestamp: event.timestampMillis, streaming: false)
        if event.role == .user, let deviceID = event.deviceID {
            out.append(contentsOf: #","deviceId":"#.utf8)
            appendString(deviceID, to: &out)
        }
        out.append(contentsOf: #","attachments":"#.utf8)
        out.append(contentsOf: AttachmentWire.json(event.attachmentsJSON, eventID: event.id).utf8)
        return finish(&out, channel: ClawlineChannel(owner: event.userID))
    }

    static func streaming(id: String, content: String, timestamp: Int64, channel: ClawlineChannel) -> [UInt8] {
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

    /// Appends `text` as a JSON string literal (RFC 8259 escaping). Most text needs no escape:
    /// it is copied in one go.
    static func appendString(_ text: String, to out: inout [UInt8]) {
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
        case 0x0A: out.append(contentsOf: #"\n"#.utf8)
        case 0x0D: out.append(contentsOf: #"\r"#.utf8)
        case 0x09: out.append(contentsOf: #"\t"#.utf8)
        case 0..<0x20:
            out.append(contentsOf: #"\u00"#.utf8)
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0xF)])
        default: out.append(byte)
        }
    }
}
