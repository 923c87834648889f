/// Turns raw terminal input bytes (raw mode, as `read(2)` or ncurses delivers them) into ``Key`` values.
///
/// Incremental: bytes may be split anywhere, so an unfinished UTF-8 character or escape sequence
/// waits for the next call. A lone ESC cannot be told from the start of a sequence, so it waits too:
/// when ``hasPendingInput`` is true and no byte arrived for ``escapeTimeoutMillis``, the caller calls
/// ``flush()``, which resolves what waits (ESC alone is ``Key/escape``).
///
/// - Important: Enter must arrive as CR (raw mode without ICRNL, ncurses `nonl()`); LF is Ctrl-J.
///   A bracketed paste (`ESC [200~ … ESC [201~`) is one ``Key/Code/paste(_:)`` whatever it holds,
///   ESC included; ``flush()`` leaves an unfinished paste alone.
public struct KeyDecoder: Sendable {
    /// How long the caller should let a lone ESC wait before ``flush()``.
    public static let escapeTimeoutMillis = 30

    static let pasteEnd: [UInt8] = [0x1B, 0x5B, 0x32, 0x30, 0x31, 0x7E]

    var pending: [UInt8] = []
    var paste: [UInt8]?

    public init() {}

    /// Whether bytes wait for more input that ``flush()`` would resolve after a timeout.
    public var hasPendingInput: Bool { paste == nil && !pending.isEmpty }

    /// Whether a bracketed paste has started and not yet ended.
    public var isPasting: Bool { paste != nil }

    /// Decodes what `bytes` completes, keeping an unfinished tail for the next call.
    public mutating func decode(_ bytes: some Sequence<UInt8>) -> [Key] {
        var keys: [Key] = []
        var input = Array(bytes)
        while true {
            if paste != nil {
                guard let rest = takePaste(input, into: &keys) else { return keys }
                input = rest
                continue
            }
            pending += input
            input = []
            var index = 0
            scan: while index < pending.count {
                switch parse(at: index) {
                case .incomplete:
                    pending.removeFirst(index)
                    return keys
                case .key(let key, let length):
                    keys.append(key)
                    index += length
                case .skip(let length):
                    index += length
                case .pasteStart(let length):
                    input = Array(pending[(index + length)...])
                    paste = []
                    break scan
                }
            }
            pending = []
            if paste == nil { return keys }
        }
    }

    /// Resolves input that waited for more bytes: ESC alone is Escape, ESC `[` / ESC `O` are Alt-[ /
    /// Alt-O, an unfinished UTF-8 character is U+FFFD, an unfinished longer sequence is dropped.
    public mutating func flush() -> [Key] {
        guard paste == nil, let first = pending.first else { return [] }
        defer { pending = [] }
        guard first == 0x1B else { return [.character(DisplayWidth.replacement)] }
        guard pending.count > 1 else { return [.escape] }
        let second = pending[1]
        if second == 0x1B { return [Key.escape.with(.alt)] }
        if pending.count == 2, second == 0x5B || second == 0x4F { return [.alt(Character(Unicode.Scalar(second)))] }
        if second >= 0x80 { return [.alt(DisplayWidth.replacement)] }
        return []
    }

    enum Parsed {
        case key(Key, length: Int)
        case skip(length: Int)
        case pasteStart(length: Int)
        case incomplete
    }

    func parse(at index: Int) -> Parsed {
        let byte = pending[index]
        switch byte {
        case 0x1B: return parseEscape(at: index)
        case 0x0D: return .key(.enter, length: 1)
        case 0x09: return .key(.tab, length: 1)
        case 0x08, 0x7F: return .key(.backspace, length: 1)
        case 0x00: return .key(.control(" "), length: 1)
        case 0x01...0x1A: return .key(.control(Character(Unicode.Scalar(byte + 0x60))), length: 1)
        case 0x1C...0x1F: return .key(.control(["\\", "]", "^", "_"][Int(byte - 0x1C)]), length: 1)
        default: return parseText(at: index)
        }
    }

    private func parseEscape(at index: Int) -> Parsed {
        guard index + 1 < pending.count else { return .incomplete }
        switch pending[index + 1] {
        case 0x5B: return parseControlSequence(at: index)
        case 0x4F:
            guard index + 2 < pending.count else { return .incomplete }
            guard let key = Self.singleShiftKey(pending[index + 2]) else { return .skip(length: 3) }
            return .key(key, length: 3)
        case 0x1B:
            guard index + 2 < pending.count else { return .incomplete }
            guard pending[index + 2] == 0x5B || pending[index + 2] == 0x4F else { return .key(.escape, length: 1) }
            return withAlt(parseEscape(at: index + 1))
        default:
            return withAlt(parse(at: index + 1))
        }
    }

    private func withAlt(_ parsed: Parsed) -> Parsed {
        switch parsed {
        case .key(let key, let length): return .key(key.with(.alt), length: length + 1)
        case .skip(let length): return .skip(length: length + 1)
        case .pasteStart(let length): return .pasteStart(length: length + 1)
        case .incomplete: return .incomplete
        }
    }

    private func parseControlSequence(at index: Int) -> Parsed {
        var end = index + 2
        while end < pending.count {
            let byte = pending[end]
            if (0x40...0x7E).contains(byte) { break }
            guard (0x20...0x3F).contains(byte), end - index < 32 else { return .skip(length: end - index) }
            end += 1
        }
        guard end < pending.count else { return .incomplete }
        let length = end - index + 1
        let parameters = Array(pending[(index + 2)..<end])
        switch Self.controlSequenceKey(parameters: parameters, final: pending[end]) {
        case .key(let key): return .key(key, length: length)
        case .pasteStart: return .pasteStart(length: length)
        case .none: return .skip(length: length)
        }
    }

    private func parseText(at index: Int) -> Parsed {
        let lead = pending[index]
        let length: Int
        switch lead {
        case 0x20...0x7E: return .key(.character(Character(Unicode.Scalar(lead))), length: 1)
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return .key(.character(DisplayWidth.replacement), length: 1)
        }
        let available = min(length, pending.count - index)
        for offset in 1..<available where !(0x80...0xBF).contains(pending[index + offset]) {
            return .key(.character(DisplayWidth.replacement), length: 1)
        }
        guard available == length else { return .incomplete }
        guard let text = String(validating: pending[index..<(index + length)], as: UTF8.self), let scalar = text.unicodeScalars.first else {
            return .key(.character(DisplayWidth.replacement), length: 1)
        }
        if DisplayWidth.isControl(scalar) { return .skip(length: length) }
        return .key(.character(Character(scalar)), length: length)
    }

    /// Appends to the paste; when its end marker arrived, emits it and returns the bytes after it.
    private mutating func takePaste(_ input: [UInt8], into keys: inout [Key]) -> [UInt8]? {
        guard var collected = paste else { return input }
        let searchFrom = max(0, collected.count - (Self.pasteEnd.count - 1))
        collected += input
        guard let end = Self.firstIndex(of: Self.pasteEnd, in: collected, from: searchFrom) else {
            paste = collected
            return nil
        }
        keys.append(.paste(Self.pasteText(collected[..<end])))
        paste = nil
        return Array(collected[(end + Self.pasteEnd.count)...])
    }

    static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    static func pasteText(_ bytes: ArraySlice<UInt8>) -> String {
        var normalized: [UInt8] = []
        normalized.reserveCapacity(bytes.count)
        var previousWasReturn = false
        for byte in bytes {
            if byte == 0x0A, previousWasReturn {
                previousWasReturn = false
                continue
            }
            previousWasReturn = byte == 0x0D
            normalized.append(byte == 0x0D ? 0x0A : byte)
        }
        return String(decoding: normalized, as: UTF8.self)
    }
}
