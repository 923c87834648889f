import Foundation

/// How the gateway names its sessions, as OpenClaw's routing contract states it
/// (`src/config/sessions/main-session.ts`): session `scope`, the main session's key and the default
/// agent. The relay is one agent, `main`, whose main session is `main` (Clawline's timeline), per
/// sender. A client that queued messages offline sends the contract it saw (`chat.send`'s
/// `expectedSessionRoutingContract`, from `agents.list`); a different one means its keys may name
/// other sessions than it thinks, and the send is refused.
public struct SessionRouting: Equatable, Sendable {
    public var scope: String
    public var mainKey: String
    public var defaultAgentID: String

    public static let relay = SessionRouting(scope: "per-sender", mainKey: "main", defaultAgentID: "main")

    /// `"<scope>|<mainKey>|<defaultAgentId>"`.
    public var contract: String { "\(scope)|\(mainKey)|\(defaultAgentID)" }

    /// Whether a client's expected contract is this one: trimmed and compared case-insensitively,
    /// as OpenClaw's `chat.send` does (its clients lowercase it).
    public func matches(_ expected: String) -> Bool {
        expected.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == contract.lowercased()
    }

    /// The session a key names: `agent:<defaultAgentId>:<rest>` is `<rest>` (OpenClaw's clients
    /// qualify keys with the agent, `agent:main:main` for the main session); others are as they are.
    public func canonical(_ key: String) -> String {
        let prefix = "agent:\(defaultAgentID):"
        guard key.count > prefix.count, key.lowercased().hasPrefix(prefix) else { return key }
        return String(key.dropFirst(prefix.count))
    }
}

/// `agents.list {}` (OpenClaw's `AgentsListResultSchema`): the relay as its one agent, with the
/// routing identity a client builds its contract from.
public struct AgentsList: Codable, Equatable, Sendable {
    public struct Agent: Codable, Equatable, Sendable {
        public struct Identity: Codable, Equatable, Sendable {
            public var name: String
        }

        public var id: String
        public var name: String
        public var identity: Identity

        public init(id: String, name: String) {
            self.id = id
            self.name = name
            identity = Identity(name: name)
        }
    }

    public var defaultId: String
    public var mainKey: String
    public var scope: String
    public var agents: [Agent]

    public init(routing: SessionRouting, name: String) {
        defaultId = routing.defaultAgentID
        mainKey = routing.mainKey
        scope = routing.scope
        agents = [Agent(id: routing.defaultAgentID, name: name)]
    }
}

/// `agent.identity.get {agentId?, sessionKey?}`'s answer (`AgentIdentityResultSchema`).
public struct AgentIdentity: Codable, Equatable, Sendable {
    public var agentId: String
    public var name: String

    public init(agentId: String, name: String) {
        self.agentId = agentId
        self.name = name
    }
}
