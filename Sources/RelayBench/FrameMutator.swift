import RelayCore

/// Deterministic mutations of real frames: the shapes that found the relay's past bugs (numbers
/// at and past every bound, wrong types, huge and deep values, broken encodings, truncation).
struct FrameMutator {
    enum Frame {
        case text(String)
        case bytes([UInt8])
        case binary([UInt8])
    }

    private let seeds: [JSONValue]
    private var state: UInt64

    init(seeds: [String], seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        self.seeds = seeds.compactMap { JSONValue.parse($0) }
        state = seed
    }

    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 33
    }

    private mutating func pick(_ count: Int) -> Int { Int(next() % UInt64(max(1, count))) }

    // Built once: String(repeating:) per frame was most of the generator's time.
    private static let brackets = String(repeating: "[", count: 5_300)
    private static let letters = String(repeating: "x", count: 100_000)
    private static let pad70k = #"{"pad":""# + String(repeating: "A", count: 70_000) + #""}"#
    private static let pad2m = #"{"pad":""# + String(repeating: "A", count: 2_000_000) + #""}"#

    static let numbers: [JSONValue] = [
        .int(Int64.max), .int(Int64.min), .int(-1), .int(0), .double(1e308), .double(-1e308), .double(0.5), .int(18_446_744_073_709_552),
        .int(10_000_000_000_000_000), .int(4_294_967_296),
    ]

    /// The `index`-th mutation.
    mutating func frame(_ index: Int) -> Frame {
        let seed = seeds[index % seeds.count]
        let text = seed.encoded()
        switch index % 14 {
        case 0: return .text(String(text.prefix(pick(text.count))))  // truncated
        case 1:
            var bytes = Array(text.utf8)
            for _ in 0..<3 { bytes[pick(bytes.count)] = UInt8(32 + next() % 95) }
            return .bytes(bytes)  // flipped bytes
        case 2, 3, 4, 5: return .text(mutate(seed, depth: 0).encoded())  // one leaf changed
        case 6: return .text(String(Self.brackets.prefix(300 + pick(5_000))))  // deep, unclosed
        case 7: return .bytes(Array(text.utf8.prefix(20)) + [0xC3, 0x28, 0xFF, 0xFE] + Array(text.utf8.dropFirst(20)))  // bad UTF-8
        case 8: return .text(text.replacingOccurrences(of: "\":\"", with: "\":\"\\ud800"))  // lone surrogates
        case 9: return .text("")
        case 10: return .binary(Array(text.utf8))
        case 11: return .text(String(text.dropLast()) + ",\"type\":\"x\",\"id\":null}")  // duplicate keys
        case 12:
            // Past the pre-login limit; one in ten past every limit (a client masks every byte it
            // sends, so the bench spends its time there).
            return .text(index % 140 == 12 ? Self.pad2m : Self.pad70k)
        default: return .text(text)  // the real frame
        }
    }

    /// The value with one leaf replaced by a number at a bound, a wrong type, null or a huge string.
    private mutating func mutate(_ value: JSONValue, depth: Int) -> JSONValue {
        switch value {
        case .object(var fields) where !fields.isEmpty && depth < 8:
            let keys = fields.keys.sorted()
            let key = keys[pick(keys.count)]
            fields[key] = mutate(fields[key] ?? .null, depth: depth + 1)
            return .object(fields)
        case .array(var items) where !items.isEmpty && depth < 8:
            let at = pick(items.count)
            items[at] = mutate(items[at], depth: depth + 1)
            return .array(items)
        default:
            switch pick(6) {
            case 0, 1: return Self.numbers[pick(Self.numbers.count)]
            case 2: return .null
            case 3: return .string(String(Self.letters.prefix(1 + pick(100_000))))
            case 4: return .array([.object([:]), .bool(true)])
            default: return .bool(false)
            }
        }
    }
}
