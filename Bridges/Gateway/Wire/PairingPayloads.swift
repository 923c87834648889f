import RelayKit

/// A device waiting for approval, as `device.pair.requested` and `device.pair.list` show it. The
/// core's pairing book keeps it without `requestId` and `ts` (its own fields).
public struct PairingRequestEntry: Codable, Equatable, Sendable {
    public var requestId: String?
    public var deviceId: String
    public var publicKey: String
    @ExplicitNull public var displayName: String?
    public var platform: String
    public var clientId: String
    public var clientMode: String
    public var role: String
    public var scopes: [String]
    public var remoteIp: String
    public var ts: Int64?

    public init(
        deviceId: String,
        publicKey: String,
        displayName: String?,
        platform: String,
        clientId: String,
        clientMode: String,
        role: String,
        scopes: [String],
        remoteIp: String
    ) {
        self.deviceId = deviceId
        self.publicKey = publicKey
        self.displayName = displayName
        self.platform = platform
        self.clientId = clientId
        self.clientMode = clientMode
        self.role = role
        self.scopes = scopes
        self.remoteIp = remoteIp
    }
}

/// `device.pair.list` → `{pending, paired}` (tokens never shown).
public struct PairingList: Codable, Equatable, Sendable {
    public struct Paired: Codable, Equatable, Sendable {
        public var deviceId: String
        @ExplicitNull public var publicKey: String?
        @ExplicitNull public var role: String?
        public var scopes: [String]
        public var status: String
        public var createdAtMs: Int64

        public init(deviceId: String, publicKey: String?, role: String?, scopes: [String], status: String, createdAtMs: Int64) {
            self.deviceId = deviceId
            self.publicKey = publicKey
            self.role = role
            self.scopes = scopes
            self.status = status
            self.createdAtMs = createdAtMs
        }
    }

    public var pending: [PairingRequestEntry]
    public var paired: [Paired]

    public init(pending: [PairingRequestEntry], paired: [Paired]) {
        self.pending = pending
        self.paired = paired
    }
}

/// `device.pair.approve|reject {requestId}`.
public struct PairingDecisionParams: Codable, Equatable, Sendable {
    public var requestId: String?
}

/// The answer to an approve or reject, and the `device.pair.resolved` event (with `ts`).
public struct PairingDecision: Codable, Equatable, Sendable {
    public var requestId: String
    public var deviceId: String
    /// approved or rejected.
    public var decision: String
    public var ts: Int64?

    public init(requestId: String, deviceId: String, approved: Bool, ts: Int64? = nil) {
        self.requestId = requestId
        self.deviceId = deviceId
        decision = approved ? "approved" : "rejected"
        self.ts = ts
    }
}

/// `device.pair.remove {deviceId}`, `device.token.rotate|revoke {deviceId, role}`.
public struct DeviceParams: Codable, Equatable, Sendable {
    public var deviceId: String?
    public var role: String?
}

public struct DeviceRemoved: Codable, Equatable, Sendable {
    public var deviceId: String
    public var removed = true

    public init(deviceId: String) { self.deviceId = deviceId }
}

/// `device.token.rotate`'s answer; `token` only for the device itself, signed in with its token.
public struct TokenRotated: Codable, Equatable, Sendable {
    public var deviceId: String
    public var role: String
    public var scopes: [String]
    public var rotatedAtMs: Int64
    public var token: String?

    public init(deviceId: String, role: String, scopes: [String], rotatedAtMs: Int64, token: String?) {
        self.deviceId = deviceId
        self.role = role
        self.scopes = scopes
        self.rotatedAtMs = rotatedAtMs
        self.token = token
    }
}

public struct TokenRevoked: Codable, Equatable, Sendable {
    public var deviceId: String
    public var role: String
    public var revokedAtMs: Int64

    public init(deviceId: String, role: String, revokedAtMs: Int64) {
        self.deviceId = deviceId
        self.role = role
        self.revokedAtMs = revokedAtMs
    }
}

// MARK: The seed's additions (a "bot" is one backend the relay fronts)

/// `"*"` or a list of bot ids (anything else reads as an empty list).
public enum BotSelection: Codable, Equatable, Sendable {
    case all
    case named([String])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let star = try? container.decode(String.self) {
            self = star == "*" ? .all : .named([])
        } else {
            self = .named((try? container.decode([String].self)) ?? [])
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .all: try container.encode("*")
        case .named(let bots): try container.encode(bots)
        }
    }
}

/// `gateway.discover {}` (no auth needed).
public struct Discovery: Codable, Equatable, Sendable {
    public struct Bot: Codable, Equatable, Sendable {
        public var botId: String
        public var name: String
        public var emoji = "🤖"
        public var status = "online"

        public init(name: String) {
            botId = name
            self.name = name
        }
    }

    public var gatewayFingerprint: String
    public var gatewayName: String
    public var bots: [Bot]
    public var pairingRequired = true

    public init(gatewayFingerprint: String, gatewayName: String, bots: [Bot]) {
        self.gatewayFingerprint = gatewayFingerprint
        self.gatewayName = gatewayName
        self.bots = bots
    }
}

/// `device.pair {deviceId, deviceName?, platform?, requestedBots, token?}`: `token` is a
/// one-time pairing-link token when sent before `connect`.
public struct BotPairingParams: Codable, Equatable, Sendable {
    public var deviceId: String?
    public var deviceName: String?
    public var platform: String?
    public var requestedBots: BotSelection?
    public var token: String?
}

public struct BotPairings: Codable, Equatable, Sendable {
    public struct Pairing: Codable, Equatable, Sendable {
        public var botId: String
        public var token: String
        public var name: String
        public var emoji = "🤖"

        public init(bot: String, token: String) {
            botId = bot
            self.token = token
            name = bot
        }
    }

    public var pairings: [Pairing]
    public var gatewayFingerprint: String

    public init(pairings: [Pairing], gatewayFingerprint: String) {
        self.pairings = pairings
        self.gatewayFingerprint = gatewayFingerprint
    }
}

/// `device.unpair {deviceId, botIds: [..] | "*"}` → `{deviceId, removed: <count>}`.
public struct BotUnpairingParams: Codable, Equatable, Sendable {
    public var deviceId: String?
    public var botIds: BotSelection?
}

public struct BotsRemoved: Codable, Equatable, Sendable {
    public var deviceId: String
    public var removed: Int64

    public init(deviceId: String, removed: Int64) {
        self.deviceId = deviceId
        self.removed = removed
    }
}
