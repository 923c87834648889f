import RelayKit

/// `tick {ts}`, every tick interval, to every connected client.
public struct Tick: Codable, Equatable, Sendable {
    public var ts: Int64

    public init(ts: Int64) { self.ts = ts }
}

/// `shutdown {reason, restartExpectedMs}` before the 1012 close.
public struct Shutdown: Codable, Equatable, Sendable {
    public var reason: String
    @ExplicitNull public var restartExpectedMs: Int64?

    public init(reason: String, restartExpectedMs: Int64? = nil) {
        self.reason = reason
        self.restartExpectedMs = restartExpectedMs
    }
}

/// The `presence` event: every connected client.
public struct PresenceList: Codable, Equatable, Sendable {
    public var presence: [PresenceEntry]

    public init(presence: [PresenceEntry]) { self.presence = presence }
}

/// `models.list {view?}`: the relay's backends are its model catalog.
public struct ModelsList: Codable, Equatable, Sendable {
    public struct Model: Codable, Equatable, Sendable {
        public var id: String
        public var name: String
        public var provider: String
        public var available = true

        public init(id: String, name: String, provider: String) {
            self.id = id
            self.name = name
            self.provider = provider
        }
    }

    public static let views: Set<String> = ["default", "configured", "provider-config", "all"]

    public var models: [Model]

    public init(models: [Model]) { self.models = models }
}

/// `gateway.identity.get`: the gateway's own Ed25519 identity.
public struct GatewayIdentity: Codable, Equatable, Sendable {
    public var deviceId: String
    public var publicKey: String

    public init(deviceId: String, publicKey: String) {
        self.deviceId = deviceId
        self.publicKey = publicKey
    }
}

/// `status`: the runtime and the most recent sessions.
public struct GatewayStatus: Codable, Equatable, Sendable {
    public struct Heartbeat: Codable, Equatable, Sendable {
        public var defaultAgentId = "main"
        public var agents: [JSONValue] = []
    }

    public struct Sessions: Codable, Equatable, Sendable {
        public var count: Int64
        public var recent: [Recent]
        public var defaults: [String: JSONValue] = [:]
    }

    public struct Recent: Codable, Equatable, Sendable {
        public var key: String
        public var kind = "direct"
        public var updatedAt: Int64
        public var age: Int64

        public init(key: String, updatedAt: Int64, age: Int64) {
            self.key = key
            self.updatedAt = updatedAt
            self.age = age
        }
    }

    public var runtimeVersion: String
    public var channelSummary: [JSONValue] = []
    public var queuedSystemEvents: [JSONValue] = []
    public var heartbeat = Heartbeat()
    public var sessions: Sessions

    public init(runtimeVersion: String, recent: [Recent]) {
        self.runtimeVersion = runtimeVersion
        sessions = Sessions(count: Int64(recent.count), recent: recent)
    }
}
