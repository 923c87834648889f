import Foundation
import RelayKit

/// How the wire model becomes text: compact JSON with sorted keys, slashes as they are (the form
/// `JSONValue.encoded()` writes, so a typed frame and the same frame as a `JSONValue` are the
/// same bytes).
public enum GatewayJSON {
    public static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    /// The same value as a `JSONValue` (for the few places that store or merge JSON: a pairing
    /// request's info in the core's book).
    public static func value(_ value: some Encodable) -> JSONValue { JSONValue.parse(encode(value)) ?? .null }

    /// Reads `T` from a parsed value (tolerantly, see `JSONValueDecoder`); nil when it does not fit.
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) -> T? {
        try? JSONValueDecoder.decode(type, from: value)
    }
}

/// An optional field the protocol writes as `null` when it has no value (`"displayName": null`),
/// where a plain optional would be left out. Reading takes a missing key as nil too.
@propertyWrapper
public struct ExplicitNull<Value: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    public func decode<Value>(_ type: ExplicitNull<Value>.Type, forKey key: Key) throws -> ExplicitNull<Value> {
        try decodeIfPresent(type, forKey: key) ?? ExplicitNull(wrappedValue: nil)
    }
}
