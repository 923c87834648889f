import RelayKit

/// `commands.list {sessionKey?, agentId?, provider?, scope?, includeArgs?}` (OpenClaw's
/// `CommandsListParamsSchema`, `packages/gateway-protocol/src/schema/commands.ts`).
public struct CommandsListParams: Codable, Equatable, Sendable {
    public var sessionKey: String?
    /// `text`, `native` or `both`.
    public var scope: String?
    public var includeArgs: Bool?

    public init(sessionKey: String? = nil, scope: String? = nil, includeArgs: Bool? = nil) {
        self.sessionKey = sessionKey
        self.scope = scope
        self.includeArgs = includeArgs
    }
}

/// `commands.list`'s answer: at most 500 entries.
public struct CommandsList: Codable, Equatable, Sendable {
    public static let maxCommands = 500

    public var commands: [CommandEntry]

    public init(commands: [CommandEntry]) { self.commands = commands }
}

/// One command as OpenClaw's `CommandEntrySchema` has it: `name` without the slash, what is typed
/// in `textAliases` (`/new`), `source` native (the gateway's own), skill or plugin, `scope` text
/// (typed in a message), native or both.
public struct CommandEntry: Codable, Equatable, Sendable {
    public struct Arg: Codable, Equatable, Sendable {
        public var name: String
        public var description: String
        /// `string`, `number` or `boolean`.
        public var type = "string"
        public var required: Bool?

        public init(name: String, description: String, required: Bool) {
            self.name = name
            self.description = description
            self.required = required
        }
    }

    public var name: String
    public var textAliases: [String]?
    public var description: String
    /// session, options, status, management, media or tools.
    public var category: String?
    public var source: String
    public var scope: String
    public var acceptsArgs: Bool
    public var args: [Arg]?

    public init(name: String, description: String, category: String?, source: String, acceptsArgs: Bool, args: [Arg]? = nil) {
        self.name = name
        textAliases = ["/" + name]
        self.description = description
        self.category = category
        self.source = source
        scope = "text"
        self.acceptsArgs = acceptsArgs
        self.args = args
    }
}
