/// A configuration file that cannot be used, located by file, line, section and key.
///
/// Its description reads `FILE:LINE: [section] key: what is wrong`, e.g.
/// `relay.toml:7: [clawline] max_queued_turns: expected a positive integer, got "x"`.
public struct ConfigError: Error, CustomStringConvertible, Sendable {
    /// What kind of problem it is; the message says the details.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case unreadable, syntax, unknownSection, unknownKey, wrongType, invalidValue, missingKey
            case duplicateName, unknownBackend, publicBind
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        public var description: String { base.rawValue }

        /// The file could not be read or is not UTF-8.
        public static let unreadable = Code(.unreadable)
        /// The file is not valid TOML.
        public static let syntax = Code(.syntax)
        public static let unknownSection = Code(.unknownSection)
        public static let unknownKey = Code(.unknownKey)
        /// A value of the wrong TOML type, e.g. a string where a number belongs.
        public static let wrongType = Code(.wrongType)
        /// A value of the right type that is out of range or malformed.
        public static let invalidValue = Code(.invalidValue)
        public static let missingKey = Code(.missingKey)
        /// Two `[[backends]]` with the same name.
        public static let duplicateName = Code(.duplicateName)
        /// A `backend` setting naming no configured backend.
        public static let unknownBackend = Code(.unknownBackend)
        /// A non-loopback `listen` address without `allow_public = true`.
        public static let publicBind = Code(.publicBind)
    }

    public let code: Code
    /// The file name as given to `load` or `parse`.
    public let file: String
    /// 1-based; nil when the place could not be found in the text.
    public let line: Int?
    /// As written in the file: `[clawline]`, `[[backends]]`; nil for the file as a whole.
    public let section: String?
    public let key: String?
    public let message: String

    public init(code: Code, file: String, line: Int?, section: String?, key: String?, message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.section = section
        self.key = key
        self.message = message
    }

    public var description: String { Self.describe(file: file, line: line, section: section, key: key, message: message) }

    /// `FILE:LINE: [section] key: message`, leaving out what is unknown.
    static func describe(file: String, line: Int?, section: String?, key: String?, message: String) -> String {
        var text = file
        if let line { text += ":\(line)" }
        let location = [section, key].compactMap { $0 }.joined(separator: " ")
        if !location.isEmpty { text += ": " + location }
        return text + ": " + message
    }
}

/// Something a configuration file says that still works but should be written differently (a key
/// under its old name), located like a `ConfigError`; `serve` logs each at start-up.
public struct ConfigWarning: Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let section: String?
    public let key: String?
    public let message: String

    public var description: String { ConfigError.describe(file: file, line: line, section: section, key: key, message: message) }
}
