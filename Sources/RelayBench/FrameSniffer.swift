/// Cheap checks on relay frames, so the generator does not parse JSON for every message.
enum FrameSniffer {
    static func isAck(_ text: String) -> Bool { text.contains("\"type\":\"ack\"") }

    static func isAssistantFinal(_ text: String) -> Bool {
        text.contains("\"role\":\"assistant\"") && text.contains("\"streaming\":false")
    }

    static func isUserEcho(_ text: String) -> Bool {
        text.contains("\"role\":\"user\"") && text.contains("\"type\":\"message\"")
    }

    /// The string value of `"key":"..."` (no escapes expected in ids).
    static func string(_ key: String, in text: String) -> String? {
        guard let start = text.range(of: "\"\(key)\":\"") else { return nil }
        guard let end = text[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(text[start.upperBound..<end])
    }

    /// The number after `marker` inside the text, e.g. `fan-17` → 17.
    static func number(after marker: String, in text: String) -> Int? {
        guard let start = text.range(of: marker) else { return nil }
        return Int(text[start.upperBound...].prefix { $0.isNumber })
    }
}

/// A client `message` frame.
func messageFrame(id: String, content: String) -> String {
    #"{"type":"message","id":"\#(id)","content":"\#(content)"}"#
}
