import Foundation
import TOMLKit

/// Where values come from: the file's name and a way to find lines in it.
struct ConfigSource {
    let fileName: String
    let locator: ConfigLineLocator
    let warnings = ConfigWarnings()

    func error(_ code: ConfigError.Code, _ section: ConfigSection, key: String? = nil, _ message: String) -> ConfigError {
        ConfigError(code: code, file: fileName, line: locator.line(of: section, key: key), section: section.label, key: key, message: message)
    }
}

/// One TOML table being read: typed getters whose errors name the file, line, section and key.
struct ConfigTable {
    let table: TOMLTable
    let section: ConfigSection
    let source: ConfigSource
    /// Keys read under their new name that the file writes under an old one (`adoptingRenamedKeys`).
    var writtenAs: [String: String] = [:]

    init(table: TOMLTable, section: ConfigSection, source: ConfigSource) {
        self.table = table
        self.section = section
        self.source = source
    }

    /// An error about `key`, named (and located) as the file writes it.
    func error(_ code: ConfigError.Code, key: String? = nil, _ message: String) -> ConfigError {
        source.error(code, section, key: key.map { writtenAs[$0] ?? $0 }, message)
    }

    /// Rejects keys outside `allowed`, reporting the one written first.
    func rejectUnknownKeys(_ allowed: [String]) throws(ConfigError) {
        let unknown = table.keys.filter { !allowed.contains($0) }
        let lines = unknown.map { source.locator.line(of: section, key: $0) ?? Int.max }
        guard let first = zip(unknown, lines).min(by: { $0.1 < $1.1 })?.0 else { return }
        throw error(.unknownKey, key: first, "unknown key; expected one of: \(allowed.joined(separator: ", "))")
    }

    func contains(_ key: String) -> Bool { table.contains(key: key) }

    func string(_ key: String) throws(ConfigError) -> String? {
        guard let value = table[key] else { return nil }
        guard let string = value.string else { throw wrongType(key, "a string", value) }
        return string
    }

    func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let bool = value.bool else { throw wrongType(key, "true or false", value) }
        return bool
    }

    /// An integer of at least `minimum` (1: "a positive integer", 0: "a non-negative integer").
    func integer(_ key: String, minimum: Int = 1) throws(ConfigError) -> Int? {
        guard let value = table[key] else { return nil }
        let expected = minimum == 1 ? "a positive integer" : minimum == 0 ? "a non-negative integer" : "an integer of at least \(minimum)"
        guard let integer = value.int, integer >= minimum else {
            throw value.type == .int
                ? error(.invalidValue, key: key, "expected \(expected), got \(Self.describe(value))") : wrongType(key, expected, value)
        }
        return integer
    }

    /// A table of string values (`env = { NAME = "value" }`), or nil when absent.
    func stringTable(_ key: String) throws(ConfigError) -> [String: String]? {
        guard let value = table[key] else { return nil }
        guard let inner = value.table else { throw wrongType(key, "a table of strings, e.g. { NAME = \"value\" }", value) }
        var out: [String: String] = [:]
        for name in inner.keys {
            guard let text = inner[name]?.string else {
                throw error(.wrongType, key: key, "\(quoted(name)) must be a string")
            }
            out[name] = text
        }
        return out
    }

    func strings(_ key: String) throws(ConfigError) -> [String]? {
        guard let value = table[key] else { return nil }
        guard let array = value.array else { throw wrongType(key, "an array of strings", value) }
        var strings: [String] = []
        for element in array {
            guard let string = element.string else { throw wrongType(key, "an array of strings", element) }
            strings.append(string)
        }
        return strings
    }

    /// A `listen` address; a non-loopback host needs `allow_public = true` in the same section.
    func endpoint(_ key: String, default defaultValue: ListenEndpoint) throws(ConfigError) -> ListenEndpoint {
        let allowPublic = try bool("allow_public") ?? false
        guard let text = try string(key) else { return defaultValue }
        let endpoint: ListenEndpoint
        do {
            endpoint = try ListenEndpoint.parse(text)
        } catch {
            throw self.error(.invalidValue, key: key, error.reason)
        }
        if !endpoint.isLoopback && !allowPublic {
            let label = section.label ?? ""
            throw error(.publicBind, key: key, "\(endpoint.host) is not a loopback address; set allow_public = true in \(label) to bind it")
        }
        return endpoint
    }

    /// A path to a file this process can read.
    func readableFile(_ key: String) throws(ConfigError) -> String? {
        guard let path = try string(key) else { return nil }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw error(.invalidValue, key: key, "cannot read file \(quoted(path))")
        }
        return path
    }

    /// A value as it would be written in the file, for "got …" in messages.
    static func describe(_ value: any TOMLValueConvertible) -> String {
        switch value.type {
        case .string: value.string.map(quoted) ?? "a string"
        case .int: value.int.map(String.init) ?? "an integer"
        case .double: value.double.map { String($0) } ?? "a number"
        case .bool: value.bool.map(String.init) ?? "a boolean"
        case .table: "a table"
        case .array: "an array"
        case .date, .time, .dateTime: "a \(value.type)"
        }
    }

    private func wrongType(_ key: String, _ expected: String, _ value: any TOMLValueConvertible) -> ConfigError {
        error(.wrongType, key: key, "expected \(expected), got \(Self.describe(value))")
    }
}

/// `text` in double quotes with escapes, as Swift (and TOML) would write it.
///
/// - Important: Not `String.debugDescription`: TOMLKit redeclares that as the bare string, and the
///   redeclaration wins wherever TOMLKit is imported.
func quoted(_ text: String) -> String {
    String(reflecting: text)
}
