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
            out += Array(#","deviceId":"#.utf8)
            appendString(deviceID, to: &out)
        }
        out += Array(#","attachments":"#.utf8)
        out += Array(AttachmentWire.json(event.attachmentsJSON, eventID: event.id).utf8)
        return finish(&out, channel: ClawlineChannel(owner: event.userID))
    }

    static func streaming(id: String, content: String, timestamp: Int64, channel: ClawlineChannel) -> [UInt8] {
        var out = header(id: id, role: "assistant", content: content, timestamp: timestamp, streaming: true)
        return finish(&out, channel: channel)
    }

    private static func finish(_ out: inout [UInt8], channel: ClawlineChannel) -> [UInt8] {
        out += Array(#","channelType":""#.utf8)
        out += Array(channel.rawValue.utf8)
        out += Array(#""}"#.utf8)
        return out
    }

    private static func header(id: String, role: String, content: String, timestamp: Int64, streaming: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(content.utf8.count + 160)
        out += Array(#"{"type":"message","id":"#.utf8)
        appendString(id, to: &out)
        out += Array(#","role":"#.utf8)
        appendString(role, to: &out)
        out += Array(#","content":"#.utf8)
        appendString(content, to: &out)
        out += Array(#","timestamp":\#(timestamp),"streaming":\#(streaming)"#.utf8)
        return out
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string literal (RFC 8259 escaping).
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
