#if canImport(Glibc)
import Glibc
#endif

/// Cheap checks on relay frames, so the generator does not parse JSON for every message.
///
/// Every check is a byte search (`memchr`, then `memcmp`) over the frame's UTF-8: the generator shares the
/// machine with the relay it measures, and Foundation's `range(of:)` cost it more per frame than
/// the relay spent relaying it.
enum FrameSniffer {
    static func isAck(_ text: String) -> Bool { contains(text, "\"type\":\"ack\"") }

    static func isAssistantFinal(_ text: String) -> Bool {
        contains(text, "\"role\":\"assistant\"") && contains(text, "\"streaming\":false")
    }

    static func isUserEcho(_ text: String) -> Bool {
        contains(text, "\"role\":\"user\"") && contains(text, "\"type\":\"message\"")
    }

    /// True when `marker` occurs in `text` (bytes, not grapheme clusters: markers are ASCII).
    static func contains(_ text: String, _ marker: StaticString) -> Bool {
        offset(of: marker.utf8Start, count: marker.utf8CodeUnitCount, in: text) != nil
    }

    /// The string value of `"key":"..."` (no escapes expected in ids).
    static func string(_ key: String, in text: String) -> String? {
        let marker = Array("\"\(key)\":\"".utf8)
        return marker.withUnsafeBufferPointer { needle -> String? in
            var text = text
            return text.withUTF8 { bytes -> String? in
                guard let start = offset(of: needle.baseAddress!, count: needle.count, in: bytes) else { return nil }
                let value = bytes[(start + needle.count)...]
                guard let end = value.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[(start + needle.count)..<end]), as: UTF8.self)
            }
        }
    }

    /// The number after `marker` inside the text, e.g. `fan-17` → 17.
    static func number(after marker: StaticString, in text: String) -> Int? {
        var text = text
        return text.withUTF8 { bytes -> Int? in
            guard let start = offset(of: marker.utf8Start, count: marker.utf8CodeUnitCount, in: bytes) else { return nil }
            var value = 0
            var digits = 0
            for byte in bytes[(start + marker.utf8CodeUnitCount)...] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 18 else { break }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
            }
            return digits > 0 ? value : nil
        }
    }

    private static func offset(of needle: UnsafePointer<UInt8>, count: Int, in text: String) -> Int? {
        var text = text
        return text.withUTF8 { offset(of: needle, count: count, in: $0) }
    }

    private static func offset(of needle: UnsafePointer<UInt8>, count: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard count > 0, let base = bytes.baseAddress else { return nil }
        var from = 0
        while from + count <= bytes.count {
            guard let hit = memchr(base + from, CInt(needle[0]), bytes.count - count - from + 1) else { return nil }
            let at = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if memcmp(base + at, needle, count) == 0 { return at }
            from = at + 1
        }
        return nil
    }
}

/// A client `message` frame.
func messageFrame(id: String, content: String) -> String {
    #"{"type":"message","id":"\#(id)","content":"\#(content)"}"#
}
