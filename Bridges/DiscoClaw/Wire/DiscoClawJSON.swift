import Foundation

/// The protocol's JSON form, both ways.
///
/// Written compact with sorted keys and unescaped slashes (the bytes the relay has always sent).
/// Read tolerantly where a server is read (`decode`): a member the model does not need may be
/// missing or mistyped, a seq may come as a double (the public server's are millisecond clocks).
public enum DiscoClawJSON {
    /// The UTF-8 text of `value`.
    public static func encode(_ value: some Encodable) -> String { String(decoding: data(value), as: UTF8.self) }

    public static func bytes(_ value: some Encodable) -> [UInt8] { [UInt8](data(value)) }

    /// One encoder for every frame: its options never change, and encoding keeps no state between calls.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    private static func data(_ value: some Encodable) -> Data { (try? encoder.encode(value)) ?? Data("{}".utf8) }

    /// `T` decoded from a server's body; nil when the bytes are not JSON or not a `T`.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) -> T? {
        guard !bytes.isEmpty else { return nil }
        return try? JSONDecoder().decode(type, from: Data(bytes))
    }
}

extension KeyedDecodingContainer {
    /// A seq, cursor or count: an integer, or a finite double within range; nil when absent or anything else.
    func integer(_ key: Key) -> Int64? {
        if let value = try? decodeIfPresent(Int64.self, forKey: key) { return value }
        guard let value = try? decodeIfPresent(Double.self, forKey: key), value.isFinite, abs(value) < 9e18 else { return nil }
        return Int64(value)
    }

    /// A string member; nil when absent, null or not a string.
    func string(_ key: Key) -> String? { (try? decodeIfPresent(String.self, forKey: key)) ?? nil }

    func boolean(_ key: Key) -> Bool? { (try? decodeIfPresent(Bool.self, forKey: key)) ?? nil }
}

/// An element of a server's array that may not decode: it is skipped, not fatal to the array.
struct Tolerant<Value: Decodable>: Decodable {
    var value: Value?

    init(from decoder: any Decoder) throws { value = try? Value(from: decoder) }
}

extension KeyedDecodingContainer {
    /// The elements of an array member that decode; nil when the member is absent or not an array.
    func tolerantArray<Value: Decodable>(of type: Value.Type, _ key: Key) -> [Value]? {
        (try? decodeIfPresent([Tolerant<Value>].self, forKey: key))?.map { $0.compactMap(\.value) }
    }
}
