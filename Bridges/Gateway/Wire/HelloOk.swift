import RelayKit

/// The payload of a successful `connect`. The relay writes every field; a client reads what it
/// needs (the version, the device token, the tick policy) and takes the rest as optional, as
/// gateways of several versions differ in them.
public struct HelloOk: Codable, Equatable, Sendable {
    public struct Server: Codable, Equatable, Sendable {
        public var version: String
        public var connId: String

        public init(version: String, connId: String) {
            self.version = version
            self.connId = connId
        }
    }

    /// Every method and event the gateway offers, and the contracts it honours (OpenClaw's
    /// `GATEWAY_SERVER_CAPS`: `chat-send-routing-contract`, …; older gateways send none).
    public struct Features: Codable, Equatable, Sendable {
        public var methods: [String]
        public var events: [String]
        public var capabilities: [String]?

        public init(methods: [String], events: [String], capabilities: [String]? = nil) {
            self.methods = methods
            self.events = events
            self.capabilities = capabilities
        }
    }

    /// The relay's routing identity (`SessionRouting.relay`), as `agents.list` states it too.
    public struct SessionDefaults: Codable, Equatable, Sendable {
        public var defaultAgentId = SessionRouting.relay.defaultAgentID
        public var mainKey = SessionRouting.relay.mainKey
        public var mainSessionKey = SessionRouting.relay.mainKey
        public var scope = SessionRouting.relay.scope

        public init() {}
    }

    public struct Snapshot: Codable, Equatable, Sendable {
        public var presence: [PresenceEntry]
        public var health: HealthSnapshot
        public var stateVersion: StateVersion
        public var uptimeMs: Int64
        public var sessionDefaults = SessionDefaults()
        /// token, password or device.
        public var authMode: String

        public init(presence: [PresenceEntry], health: HealthSnapshot, stateVersion: StateVersion, uptimeMs: Int64, authMode: String) {
            self.presence = presence
            self.health = health
            self.stateVersion = stateVersion
            self.uptimeMs = uptimeMs
            self.authMode = authMode
        }
    }

    /// The role and scopes granted; the device token when one was issued or presented.
    public struct Auth: Codable, Equatable, Sendable {
        public var role: String?
        public var scopes: [String]?
        public var deviceToken: String?
        public var issuedAtMs: Int64?

        public init(role: String, scopes: [String], deviceToken: String? = nil, issuedAtMs: Int64? = nil) {
            self.role = role
            self.scopes = scopes
            self.deviceToken = deviceToken
            self.issuedAtMs = issuedAtMs
        }
    }

    public struct Policy: Codable, Equatable, Sendable {
        public var maxPayload: Int64?
        public var maxBufferedBytes: Int64?
        public var tickIntervalMs: Int64?
        /// What `chat.send` attachments may weigh (`ChatAttachments`).
        public var attachments: ChatAttachments.Policy? = ChatAttachments.Policy()

        public init(maxPayload: Int64, maxBufferedBytes: Int64, tickIntervalMs: Int64) {
            self.maxPayload = maxPayload
            self.maxBufferedBytes = maxBufferedBytes
            self.tickIntervalMs = tickIntervalMs
        }
    }

    /// Always written; a reader does without it.
    public var type: String? = "hello-ok"
    /// The version agreed (3 or 4; a gateway that leaves it out speaks 3).
    public var `protocol`: Int64?
    public var server: Server?
    public var features: Features?
    public var snapshot: Snapshot?
    public var auth: Auth?
    public var policy: Policy?

    public init(protocol version: Int64, server: Server, features: Features, snapshot: Snapshot, auth: Auth, policy: Policy) {
        self.protocol = version
        self.server = server
        self.features = features
        self.snapshot = snapshot
        self.auth = auth
        self.policy = policy
    }
}

/// One connected client as `presence`, `system-presence` and `hello-ok.snapshot` list it.
public struct PresenceEntry: Codable, Equatable, Sendable {
    public var deviceId: String
    public var role: String
    public var roles: [String]
    public var scopes: [String]
    public var clientId: String
    public var mode: String
    public var platform: String
    public var ts: Int64
    public var version: String
    @ExplicitNull public var deviceFamily: String?
    @ExplicitNull public var host: String?
    public var reason = "connect"

    public init(
        deviceId: String,
        role: String,
        scopes: [String],
        clientId: String,
        mode: String,
        platform: String,
        ts: Int64,
        version: String,
        deviceFamily: String?,
        host: String?
    ) {
        self.deviceId = deviceId
        self.role = role
        roles = [role]
        self.scopes = scopes
        self.clientId = clientId
        self.mode = mode
        self.platform = platform
        self.ts = ts
        self.version = version
        self.deviceFamily = deviceFamily
        self.host = host
    }
}

/// `health`, the `health` event and `hello-ok.snapshot.health`; apps read `ok`.
public struct HealthSnapshot: Codable, Equatable, Sendable {
    public var ok = true
    public var ts: Int64
    public var durationMs: Int64 = 0
    public var defaultAgentId = "main"
    public var channels: [String: JSONValue] = [:]
    public var channelOrder: [String] = []
    public var agents: [JSONValue] = []
    public var uptimeMs: Int64
    public var connections: Int64

    public init(ts: Int64, uptimeMs: Int64, connections: Int64) {
        self.ts = ts
        self.uptimeMs = uptimeMs
        self.connections = connections
    }
}
