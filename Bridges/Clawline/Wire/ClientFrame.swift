import RelayKit

/// A client → server frame, exactly the protocol's JSON: what the relay's Clawline listener
/// decodes (`decode(_:)`, which checks every rule of the schema) and what its upstream account
/// sends a provider (`encoded()`).
public enum ClientFrame: Equatable, Sendable {
    case pairRequest(PairRequest)
    case pairDecision(PairDecision)
    case auth(Auth)
    case message(Message)
    case typing(Typing)

    /// `pair_request`: a device asks to join.
    public struct PairRequest: Codable, Equatable, Sendable {
        public var protocolVersion = 1
        /// A UUIDv4.
        public var deviceId: String
        /// At most 64 UTF-8 bytes.
        public var claimedName: String?
        /// An open object: `platform` and `model` (non-empty strings), `osVersion?`, `appVersion?`,
        /// and whatever else the app sends (shown to the admin as sent).
        public var deviceInfo: JSONValue

        public init(deviceId: String, claimedName: String?, deviceInfo: JSONValue) {
            self.deviceId = deviceId
            self.claimedName = claimedName
            self.deviceInfo = deviceInfo
        }

        /// A `deviceInfo` with the documented fields.
        public static func deviceInfo(platform: String, model: String, osVersion: String? = nil, appVersion: String? = nil) -> JSONValue {
            var fields = ["platform": JSONValue.string(platform), "model": .string(model)]
            fields["osVersion"] = osVersion.map(JSONValue.string)
            fields["appVersion"] = appVersion.map(JSONValue.string)
            return .object(fields)
        }
    }

    /// `pair_decision`: an admin device decides a pending request.
    public struct PairDecision: Codable, Equatable, Sendable {
        public var deviceId: String
        public var approve: Bool
        /// The user the device joins (a UUIDv4); required when approving.
        public var userId: String?

        public init(deviceId: String, approve: Bool, userId: String?) {
            self.deviceId = deviceId
            self.approve = approve
            self.userId = userId
        }
    }

    /// `auth`: a paired device opens its session.
    ///
    /// - Important: carries the device's token: never logged; the audit redacts it (`token`).
    public struct Auth: Codable, Equatable, Sendable {
        public var protocolVersion = 1
        public var token: String
        public var deviceId: String
        /// The last stored event (`s_…`) the device has; absent or null asks for the tail.
        public var lastMessageId: String?

        public init(token: String, deviceId: String, lastMessageId: String?) {
            self.token = token
            self.deviceId = deviceId
            self.lastMessageId = lastMessageId
        }
    }

    /// `message`: the user says something.
    public struct Message: Codable, Equatable, Sendable {
        /// `c_…`, unique per device.
        public var id: String
        public var content: String
        /// Exactly as sent; the rules (`MessageRules`) are checked after the duplicate check.
        public var attachments: [JSONValue]?
        /// Absent means personal.
        public var channelType: ClawlineChannel?

        public init(id: String, content: String, attachments: [JSONValue]? = nil, channelType: ClawlineChannel? = nil) {
            self.id = id
            self.content = content
            self.attachments = attachments
            self.channelType = channelType
        }

        public var channel: ClawlineChannel { channelType ?? .personal }

        /// A new client message id, `c_<uuid>`.
        public static func newID() -> String { "c_" + Identifiers.newUUID() }
    }

    /// `typing`: the user is (not) typing; a client's never carries `role`.
    public struct Typing: Codable, Equatable, Sendable {
        public var active: Bool

        public init(active: Bool) { self.active = active }
    }

    /// The frame's `type`.
    public var type: String {
        switch self {
        case .pairRequest: "pair_request"
        case .pairDecision: "pair_decision"
        case .auth: "auth"
        case .message: "message"
        case .typing: "typing"
        }
    }

    /// The frame as JSON text.
    public func encoded() -> String { FrameEncoder.encode(self) }
}

extension ClientFrame: Codable {
    private enum Keys: String, CodingKey {
        case type
    }

    public init(from decoder: any Decoder) throws {
        let type = try decoder.container(keyedBy: Keys.self).decode(String.self, forKey: .type)
        switch type {
        case "pair_request": self = .pairRequest(try PairRequest(from: decoder))
        case "pair_decision": self = .pairDecision(try PairDecision(from: decoder))
        case "auth": self = .auth(try Auth(from: decoder))
        case "message": self = .message(try Message(from: decoder))
        case "typing": self = .typing(try Typing(from: decoder))
        default:
            throw DecodingError.dataCorrupted(.init(codingPath: [Keys.type], debugDescription: "unknown message type \(type.prefix(64))"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(type, forKey: .type)
        switch self {
        case .pairRequest(let frame): try frame.encode(to: encoder)
        case .pairDecision(let frame): try frame.encode(to: encoder)
        case .auth(let frame): try frame.encode(to: encoder)
        case .message(let frame): try frame.encode(to: encoder)
        case .typing(let frame): try frame.encode(to: encoder)
        }
    }
}
