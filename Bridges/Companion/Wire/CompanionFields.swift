import RelayKit

/// The members of a JSON object, read the way the protocol's tolerant reader reads them: a field
/// that must be a string says so by name; the lenient accessors ignore a value of another type.
public struct CompanionFields: Sendable, Equatable {
    public var members: [String: JSONValue]

    public init(_ members: [String: JSONValue] = [:]) { self.members = members }

    /// The fields of `value` when it is an object.
    public init?(_ value: JSONValue?) {
        guard case .object(let members)? = value else { return nil }
        self.members = members
    }

    public subscript(key: String) -> JSONValue? { members[key] }

    public var isEmpty: Bool { members.isEmpty }

    /// The string at `key`; nil when absent or of another type.
    public func string(_ key: String) -> String? { members[key]?.stringValue }

    /// The string at `key` unless it is empty.
    public func nonEmptyString(_ key: String) -> String? { string(key).flatMap { $0.isEmpty ? nil : $0 } }

    public func bool(_ key: String) -> Bool? { members[key]?.boolValue }

    /// A present field must be a string; an absent or null one is nil.
    public func optionalString(_ key: String) throws(CompanionError) -> String? {
        switch members[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw .invalid("\(key) must be a string")
        }
    }

    /// A non-empty string.
    public func requiredString(_ key: String) throws(CompanionError) -> String {
        guard let value = try optionalString(key), !value.isEmpty else { throw .invalid("\(key) is required") }
        return value
    }

    /// A required non-empty prompt of at most `CompanionLimits.maxPromptBytes`.
    public func prompt(_ key: String) throws(CompanionError) -> String {
        let text = try requiredString(key)
        guard text.utf8.count <= CompanionLimits.maxPromptBytes else { throw .tooLarge(key) }
        return text
    }

    /// An array of strings; absent or null is an error when `required`, else empty.
    public func strings(_ key: String, required: Bool) throws(CompanionError) -> [String] {
        switch members[key] {
        case nil, .null?:
            if required { throw .invalid("\(key) must be an array of strings") }
            return []
        case .array(let items)?:
            var out: [String] = []
            out.reserveCapacity(items.count)
            for item in items {
                guard let text = item.stringValue else { throw .invalid("\(key) must be an array of strings") }
                out.append(text)
            }
            return out
        default:
            throw .invalid("\(key) must be an array of strings")
        }
    }
}
