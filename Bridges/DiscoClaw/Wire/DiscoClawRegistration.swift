import RelayKit

/// A device asking for a token: `POST /auth/register {name?, platform, setupToken}` or, from an
/// authenticated device, `POST /auth/devices {name, platform}`.
///
/// Read leniently, as the relay always has: a member that is not a string counts as absent (the
/// routes then answer `platformRequired` or `invalidSetupToken` in their order).
public struct DiscoClawDeviceRequest: Encodable, Equatable, Sendable {
    public var name: String?
    public var platform: String?
    public var setupToken: String?

    public init(name: String?, platform: String?, setupToken: String? = nil) {
        self.name = name
        self.platform = platform
        self.setupToken = setupToken
    }

    public init(json object: [String: JSONValue]) {
        name = object["name"]?.stringValue
        platform = object["platform"]?.stringValue
        setupToken = object["setupToken"]?.stringValue
    }
}

/// A device's token: the `201` of `POST /auth/register {userId, deviceId, token}` and of
/// `POST /auth/devices {deviceId, token}` (no `userId`: the caller's).
public struct DiscoClawRegistration: Codable, Equatable, Sendable {
    public var userId: String?
    public var deviceId: String
    public var token: String

    public init(userId: String?, deviceId: String, token: String) {
        self.userId = userId
        self.deviceId = deviceId
        self.token = token
    }

    /// A server's answer needs a non-empty token and a device id.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let token = container.string(.token), !token.isEmpty, let deviceId = container.string(.deviceId) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "no device token"))
        }
        self.init(userId: container.string(.userId), deviceId: deviceId, token: token)
    }
}

/// `GET /auth/me`: `{user: {id}, device: {id, name?, platform?}}`.
public struct DiscoClawMe: Codable, Equatable, Sendable {
    public struct User: Codable, Equatable, Sendable {
        public var id: String
        public var name: String?

        public init(id: String, name: String? = nil) {
            self.id = id
            self.name = name
        }
    }

    public struct Device: Codable, Equatable, Sendable {
        public var id: String
        public var name: String?
        public var platform: String?

        public init(id: String, name: String?, platform: String?) {
            self.id = id
            self.name = name
            self.platform = platform
        }
    }

    public var user: User
    public var device: Device

    public init(user: User, device: Device) {
        self.user = user
        self.device = device
    }
}

/// `GET /auth/devices`: `{devices: [...]}`, the caller's one marked `isCurrent`.
public struct DiscoClawDeviceList: Codable, Equatable, Sendable {
    public struct Item: Codable, Equatable, Sendable {
        public var id: String
        /// `""` when the device gave none (the app's model has a string).
        public var name: String
        public var platform: String
        public var lastSeen: Int64
        public var createdAt: Int64
        public var isCurrent: Bool

        public init(id: String, name: String, platform: String, lastSeen: Int64, createdAt: Int64, isCurrent: Bool) {
            self.id = id
            self.name = name
            self.platform = platform
            self.lastSeen = lastSeen
            self.createdAt = createdAt
            self.isCurrent = isCurrent
        }
    }

    public var devices: [Item]

    public init(devices: [Item]) { self.devices = devices }
}

/// `GET /health`: `{ok, uptime, connections}` (seconds since start, open sockets).
public struct DiscoClawHealth: Codable, Equatable, Sendable {
    public var ok: Bool
    public var uptime: Int64
    public var connections: Int64

    public init(ok: Bool = true, uptime: Int64, connections: Int64) {
        self.ok = ok
        self.uptime = uptime
        self.connections = connections
    }
}
