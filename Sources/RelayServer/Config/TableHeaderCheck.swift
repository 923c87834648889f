/// toml++ (inside TOMLKit) aborts the process, in release builds too, on a table header whose
/// first key starts with a character no key can start with (`[^`, `[ #`, `[[.a]]`, a lone `[`).
/// The relay checks table headers itself first, so a typo in a config file is an error message.
enum TableHeaderCheck {
    /// The first table header whose key cannot start, with its line and the character found.
    static func firstInvalid(in text: String) -> (line: Int, found: String)? {
        let bytes = Array(text.utf8)
        // A UTF-8 byte order mark is not content (toml++ skips it; found by the fuzzer).
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1
        var depth = 0  // open brackets and braces of a value (arrays span lines)
        var atLineStart = true
        func skipLine() { while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 } }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\n"):
                line += 1
                atLineStart = true
                index += 1
                continue
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                index += 1
                continue
            case UInt8(ascii: "#"):
                skipLine()
                continue
            default:
                break
            }
            if atLineStart, depth == 0, byte == UInt8(ascii: "[") {
                var next = index + 1
                if next < bytes.count, bytes[next] == UInt8(ascii: "[") { next += 1 }
                while next < bytes.count, bytes[next] == UInt8(ascii: " ") || bytes[next] == UInt8(ascii: "\t") { next += 1 }
                let first = next < bytes.count ? bytes[next] : UInt8(ascii: "\n")
                if !canStartKey(first) { return (line, describe(first)) }
                skipLine()
                continue
            }
            atLineStart = false
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"): skipString(bytes, &index, &line)
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                index += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth = max(0, depth - 1)
                index += 1
            default: index += 1
            }
        }
        return nil
    }

    private static func canStartKey(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "]"):
            true
        default: false
        }
    }

    private static func describe(_ byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "\n"), UInt8(ascii: "\r"): "the end of the line"
        case 0x21...0x7E: "'\(Character(Unicode.Scalar(byte)))'"
        default: "byte 0x\(String(byte, radix: 16))"
        }
    }

    /// Moves past a basic or literal string, single- or multi-line, counting its newlines.
    private static func skipString(_ bytes: [UInt8], _ index: inout Int, _ line: inout Int) {
        let quote = bytes[index]
        let triple = index + 2 < bytes.count && bytes[index + 1] == quote && bytes[index + 2] == quote
        index += triple ? 3 : 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\"), quote == UInt8(ascii: "\"") {
                index += 2
                continue
            }
            if byte == UInt8(ascii: "\n") {
                line += 1
                if !triple { return }  // an unterminated single-line string: toml++ reports it
            }
            if byte == quote {
                if !triple {
                    index += 1
                    return
                }
                if index + 2 < bytes.count, bytes[index + 1] == quote, bytes[index + 2] == quote {
                    index += 3
                    return
                }
            }
            index += 1
        }
    }
}
