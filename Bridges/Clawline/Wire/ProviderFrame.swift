import RelayCore

/// A frame a Clawline provider sent to the relay's upstream account, read as far as a client needs it.
///
/// Tolerant reader: unknown types become `.other`, unknown fields are ignored, and the variants the
/// public providers send (no `channelType`, `auth_result` `rate_limited`) are accepted.
enum ProviderFrame: Equatable, Sendable {
    case pairResult(PairResult)
    case authResult(AuthResult)
    case ack(id: String)
    case message(ProviderMessage)
    case error(code: String, message: String, messageID: String?)
    /// The assistant started or stopped typing.
    case typing(active: Bool)
    case other(type: String)

    struct PairResult: Equatable, Sendable {
        var success: Bool
        var token: String? = nil
        var userID: String? = nil
        var reason: String? = nil
    }

    struct AuthResult: Equatable, Sendable {
        var success: Bool
        var reason: String? = nil
        var userID: String? = nil
        /// How many replayed `message` frames follow.
        var replayCount = 0
        var replayTruncated = false
        var historyReset = false
    }

    /// Nil when the text is not a JSON object with a string `type`.
    static func decode(_ bytes: [UInt8]) -> ProviderFrame? {
        guard let frame = JSONValue.parse(bytes), let type = frame["type"]?.stringValue else { return nil }
        switch type {
        case "pair_result":
            return .pairResult(
                PairResult(
                    success: frame["success"]?.boolValue == true,
                    token: frame["token"]?.stringValue,
                    userID: frame["userId"]?.stringValue,
                    reason: frame["reason"]?.stringValue
                )
            )
        case "auth_result":
            return .authResult(
                AuthResult(
                    success: frame["success"]?.boolValue == true,
                    reason: frame["reason"]?.stringValue,
                    userID: frame["userId"]?.stringValue,
                    replayCount: Int(clamping: max(0, frame["replayCount"]?.intValue ?? 0)),
                    replayTruncated: frame["replayTruncated"]?.boolValue == true,
                    historyReset: frame["historyReset"]?.boolValue == true
                )
            )
        case "ack":
            guard let id = frame["id"]?.stringValue else { return .other(type: type) }
            return .ack(id: id)
        case "message":
            return ProviderMessage(frame).map(ProviderFrame.message) ?? .other(type: type)
        case "error":
            let code = frame["code"]?.stringValue ?? ClawlineErrorCode.serverError.rawValue
            return .error(code: code, message: frame["message"]?.stringValue ?? code, messageID: frame["messageId"]?.stringValue)
        case "typing":
            guard frame["role"]?.stringValue != "user", let active = frame["active"]?.boolValue else { return .other(type: type) }
            return .typing(active: active)
        default:
            return .other(type: type)
        }
    }
}

/// A server `message` event: a user echo (any device of the user) or assistant output.
struct ProviderMessage: Equatable, Sendable {
    enum Role: Equatable, Sendable {
        case user
        case assistant
        case other(String)
    }

    var id: String
    var role: Role
    var content: String
    /// True for an assistant update carrying the full content so far; false for a stored event.
    var streaming: Bool
    /// The device that sent a user message.
    var deviceID: String?
    /// On a relay provider, the admin channel's events reach admin devices too; they are not this timeline.
    var isAdminChannel: Bool

    init(id: String, role: Role, content: String, streaming: Bool = false, deviceID: String? = nil, isAdminChannel: Bool = false) {
        self.id = id
        self.role = role
        self.content = content
        self.streaming = streaming
        self.deviceID = deviceID
        self.isAdminChannel = isAdminChannel
    }

    init?(_ frame: JSONValue) {
        guard let id = frame["id"]?.stringValue, !id.isEmpty else { return nil }
        let role: Role
        switch frame["role"]?.stringValue {
        case "user": role = .user
        case "assistant": role = .assistant
        case let other: role = .other(other ?? "")
        }
        self.init(
            id: id,
            role: role,
            content: frame["content"]?.stringValue ?? "",
            streaming: frame["streaming"]?.boolValue == true,
            deviceID: frame["deviceId"]?.stringValue,
            isAdminChannel: frame["channelType"]?.stringValue == ClawlineChannel.admin.rawValue
        )
    }

    /// A stored event whose id can serve as the replay cursor (streaming updates are not stored yet).
    var isCursor: Bool { !streaming }
}
