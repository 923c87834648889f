import RelayKit

/// Decodes the wire model from a frame already parsed by `JSONValue.parse` (the relay's own
/// parser: depth limit, no lone surrogates), without parsing it twice.
///
/// A tolerant reader, as the protocol's peers are: an optional field of the wrong type reads as
/// absent (`decodeIfPresent` gives nil, as `params["x"]?.stringValue` did), `[String]` keeps the
/// strings of an array and drops the rest, a `JSONValue` field takes whatever is there (`null`
/// included), and integers are JSON integers only (`3.0` is not a protocol version).
///
/// - Important: on the hot path (every request a client sends): a field costs a dictionary lookup
///   and no allocation; coding paths are built only for an error.
public enum JSONValueDecoder {
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try ValueDecoder(value: value, parentPath: [], key: nil).read(type)
    }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let parentPath: [any CodingKey]
    let key: (any CodingKey)?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    var codingPath: [any CodingKey] { key.map { parentPath + [$0] } ?? parentPath }

    func read<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self { return unsafeBitCast(value, to: T.self) }
        if T.self == [String].self, case .array(let items) = value { return unsafeBitCast(items.compactMap(\.stringValue), to: T.self) }
        return try T(from: self)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: JSONValue].self, value, codingPath) }
        return KeyedDecodingContainer(KeyedValues<Key>(members: members, decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw mismatch([JSONValue].self, value, codingPath) }
        return UnkeyedValues(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValue(decoder: self) }
}

/// A type mismatch, described by the kind of value found (never the value itself: a frame's text
/// may be large, and a tolerant reader meets mismatches on purpose).
private func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
    .typeMismatch(type, DecodingError.Context(codingPath: path, debugDescription: "found \(kind(of: value))"))
}

private func kind(of value: JSONValue) -> String {
    switch value {
    case .null: "null"
    case .bool: "a boolean"
    case .int, .double: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
}

/// Scalars as the protocol writes them: integers are `.int`, a double also takes an integer; nil
/// for anything else (no error is built: optional fields of another type are read this way).
private func convert<T>(_ value: JSONValue, as type: T.Type) -> T? {
    switch value {
    case .string(let text) where T.self == String.self: unsafeBitCast(text, to: T.self)
    case .bool(let flag) where T.self == Bool.self: unsafeBitCast(flag, to: T.self)
    case .int(let number) where T.self == Int64.self: unsafeBitCast(number, to: T.self)
    case .int(let number) where T.self == Int.self: unsafeBitCast(Int(number), to: T.self)
    case .int(let number) where T.self == Double.self: unsafeBitCast(Double(number), to: T.self)
    case .double(let number) where T.self == Double.self: unsafeBitCast(number, to: T.self)
    default: nil
    }
}

private func scalar<T>(_ value: JSONValue, as type: T.Type, _ path: @autoclosure () -> [any CodingKey]) throws -> T {
    guard let converted = convert(value, as: type) else { throw mismatch(type, value, path()) }
    return converted
}

private struct KeyedValues<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let decoder: ValueDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] { members.keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { members[key.stringValue].map { $0 == .null } ?? true }

    private func value(_ key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "missing"))
        }
        return value
    }

    private func nested(_ key: Key) throws -> ValueDecoder { ValueDecoder(value: try value(key), parentPath: codingPath, key: key) }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try scalar(value(key), as: type, codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try scalar(value(key), as: type, codingPath + [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try scalar(value(key), as: type, codingPath + [key]) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try scalar(value(key), as: type, codingPath + [key]) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try scalar(value(key), as: type, codingPath + [key]) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try nested(key).read(type) }

    // Tolerant: a field of the wrong type is absent. A `JSONValue` field keeps an explicit null.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { members[key.stringValue].flatMap { convert($0, as: type) } }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { members[key.stringValue].flatMap { convert($0, as: type) } }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { members[key.stringValue].flatMap { convert($0, as: type) } }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { members[key.stringValue].flatMap { convert($0, as: type) } }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { members[key.stringValue].flatMap { convert($0, as: type) } }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = members[key.stringValue] else { return nil }
        if T.self == JSONValue.self { return unsafeBitCast(value, to: T.self) }
        if case .null = value { return nil }
        return try? ValueDecoder(value: value, parentPath: codingPath, key: key).read(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try nested(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try nested(key).unkeyedContainer() }

    func superDecoder() throws -> any Decoder { decoder }

    func superDecoder(forKey key: Key) throws -> any Decoder { try nested(key) }
}

private struct UnkeyedValues: UnkeyedDecodingContainer {
    struct Index: CodingKey {
        var intValue: Int?
        var stringValue: String { "\(intValue ?? 0)" }
        init(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { nil }
    }

    let items: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(items: [JSONValue], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func next() throws -> ValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(JSONValue.self, DecodingError.Context(codingPath: codingPath, debugDescription: "no more items"))
        }
        defer { currentIndex += 1 }
        return ValueDecoder(value: items[currentIndex], parentPath: codingPath, key: Index(intValue: currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().read(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { try next() }
}

private struct SingleValue: SingleValueDecodingContainer {
    let decoder: ValueDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try scalar(decoder.value, as: type, codingPath) }
    func decode(_ type: String.Type) throws -> String { try scalar(decoder.value, as: type, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try scalar(decoder.value, as: type, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try scalar(decoder.value, as: type, codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try scalar(decoder.value, as: type, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.read(type) }
}
