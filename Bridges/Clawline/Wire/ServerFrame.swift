import Foundation
import RelayKit

/// A server → client frame, exactly the protocol's JSON: what the relay's Clawline listener
/// sends (`encoded()`; the hot frames also by hand, `FastFrames`) and what its upstream account
/// reads from a provider (`decode(_:)`, a tolerant reader).
public enum ServerFrame: Equatable, Sendable {
    case pairResult(PairResult)
    case pairApprovalRequest(PairApprovalRequest)
    case authResult(AuthResult)
    case userInfo(UserInfo)
    case ack(Ack)
    case message(Message)
    case typing(Typing)
    case error(ErrorFrame)
    /// A frame the reader does not know (later providers add `session_info`, `stream_snapshot`, …).
    case other(type: String)

    /// `pair_result`: `token` and `userId` on success, `reason` (`PairRefusal`) otherwise.
    ///
    /// - Important: carries the device's token: never logged; the audit redacts it (`token`).
    public struct PairResult: Codable, Equatable, Sendable {
        public var success: Bool
        public var token: String?
        public var userId: String?
        public var reason: String?

        public init(success: Bool, token: String? = nil, userId: String? = nil, reason: String? = nil) {
            self.success = success
            self.token = token
            self.userId = userId
            self.reason = reason
        }

        public static func refused(_ reason: PairRefusal) -> PairResult { PairResult(success: false, reason: reason.rawValue) }
    }

    /// `pair_approval_request`: what an admin device is asked to decide.
    public struct PairApprovalRequest: Codable, Equatable, Sendable {
        public var deviceId: String
        public var claimedName: String?
        public var deviceInfo: JSONValue

        public init(deviceId: String, claimedName: String?, deviceInfo: JSONValue) {
            self.deviceId = deviceId
            self.claimedName = claimedName
            self.deviceInfo = deviceInfo
        }
    }

    /// `auth_result`, sent before the replayed events it counts.
    public struct AuthResult: Codable, Equatable, Sendable {
        public var success: Bool
        /// `AuthRefusal` (a public provider also says `rate_limited`).
        public var reason: String?
        public var userId: String?
        public var sessionId: String?
        public var isAdmin: Bool?
        /// How many replayed `message` frames follow.
        public var replayCount: Int?
        public var replayTruncated: Bool?
        public var historyReset: Bool?

        public init(
            success: Bool,
            reason: String? = nil,
            userId: String? = nil,
            sessionId: String? = nil,
            isAdmin: Bool? = nil,
            replayCount: Int? = nil,
            replayTruncated: Bool? = nil,
            historyReset: Bool? = nil
        ) {
            self.success = success
            self.reason = reason
            self.userId = userId
            self.sessionId = sessionId
            self.isAdmin = isAdmin
            self.replayCount = replayCount
            self.replayTruncated = replayTruncated
            self.historyReset = historyReset
        }

        public static func refused(_ reason: AuthRefusal) -> AuthResult { AuthResult(success: false, reason: reason.rawValue) }
    }

    /// `user_info`: who the device's user is and whether it may use the admin channel; sent after a
    /// successful `auth_result` (before the replay) and when the admin flag changes.
    public struct UserInfo: Codable, Equatable, Sendable {
        public var userId: String
        public var isAdmin: Bool

        public init(userId: String, isAdmin: Bool) {
            self.userId = userId
            self.isAdmin = isAdmin
        }
    }

    /// `ack`: the client message `id` is stored.
    public struct Ack: Codable, Equatable, Sendable {
        public var id: String

        public init(id: String) { self.id = id }
    }

    /// `message`: a stored event (user echo or assistant final, `streaming: false`) or an
    /// assistant update carrying the full content so far (`streaming: true`).
    public struct Message: Codable, Equatable, Sendable {
        /// `s_…`.
        public var id: String
        /// `user` or `assistant`.
        public var role: String
        public var content: String
        /// Milliseconds since 1970.
        public var timestamp: Int64
        public var streaming: Bool
        /// The device that sent a user message.
        public var deviceId: String?
        /// Each with an `id` (`<event id>-<index>`); always present on a stored event.
        public var attachments: [JSONValue]?
        public var channelType: ClawlineChannel?

        public init(
            id: String,
            role: String,
            content: String,
            timestamp: Int64 = 0,
            streaming: Bool = false,
            deviceId: String? = nil,
            attachments: [JSONValue]? = nil,
            channelType: ClawlineChannel? = nil
        ) {
            self.id = id
            self.role = role
            self.content = content
            self.timestamp = timestamp
            self.streaming = streaming
            self.deviceId = deviceId
            self.attachments = attachments
            self.channelType = channelType
        }

        /// A stored event, whose id can serve as the replay cursor (streaming updates are not stored yet).
        public var isStored: Bool { !streaming }
    }

    /// `typing`: the assistant started or stopped typing.
    public struct Typing: Codable, Equatable, Sendable {
        public var role = "assistant"
        public var active: Bool
        public var channelType: ClawlineChannel?

        public init(active: Bool, channelType: ClawlineChannel?) {
            self.active = active
            self.channelType = channelType
        }
    }

    /// `error`; also the body of every HTTP error.
    public struct ErrorFrame: Codable, Equatable, Sendable {
        /// A `ClawlineErrorCode` (kept as text: a provider may send others).
        public var code: String
        public var message: String
        public var messageId: String?

        public init(code: String, message: String, messageId: String? = nil) {
            self.code = code
            self.message = message
            self.messageId = messageId
        }
    }

    /// The frame's `type`.
    public var type: String {
        switch self {
        case .pairResult: "pair_result"
        case .pairApprovalRequest: "pair_approval_request"
        case .authResult: "auth_result"
        case .userInfo: "user_info"
        case .ack: "ack"
        case .message: "message"
        case .typing: "typing"
        case .error: "error"
        case .other(let type): type
        }
    }

    /// The frame as JSON text.
    public func encoded() -> String { FrameEncoder.encode(self) }
}

extension ServerFrame: Codable {
    private enum Keys: String, CodingKey {
        case type
    }

    public init(from decoder: any Decoder) throws {
        let type = try decoder.container(keyedBy: Keys.self).decode(String.self, forKey: .type)
        switch type {
        case "pair_result": self = .pairResult(try PairResult(from: decoder))
        case "pair_approval_request": self = .pairApprovalRequest(try PairApprovalRequest(from: decoder))
        case "auth_result": self = .authResult(try AuthResult(from: decoder))
        case "user_info": self = .userInfo(try UserInfo(from: decoder))
        case "ack": self = .ack(try Ack(from: decoder))
        case "message": self = .message(try Message(from: decoder))
        case "typing": self = .typing(try Typing(from: decoder))
        case "error": self = .error(try ErrorFrame(from: decoder))
        default: self = .other(type: type)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(type, forKey: .type)
        switch self {
        case .pairResult(let frame): try frame.encode(to: encoder)
        case .pairApprovalRequest(let frame): try frame.encode(to: encoder)
        case .authResult(let frame): try frame.encode(to: encoder)
        case .userInfo(let frame): try frame.encode(to: encoder)
        case .ack(let frame): try frame.encode(to: encoder)
        case .message(let frame): try frame.encode(to: encoder)
        case .typing(let frame): try frame.encode(to: encoder)
        case .error(let frame): try frame.encode(to: encoder)
        case .other: break
        }
    }
}

/// `GET /version`'s body.
public struct VersionBody: Codable, Equatable, Sendable {
    public var protocolVersion = 1

    public init() {}
}

/// `POST /upload`'s answer.
public struct UploadBody: Codable, Equatable, Sendable {
    /// `a_<uuid>`.
    public var assetId: String
    public var mimeType: String
    public var size: Int64

    public init(assetId: String, mimeType: String, size: Int64) {
        self.assetId = assetId
        self.mimeType = mimeType
        self.size = size
    }
}

/// JSON text for the frames off the hot path (`FastFrames` writes the hot ones).
public enum FrameEncoder {
    /// - Important: `JSONEncoder` orders keys as it likes; `sorted` fixes the order (tests compare bytes).
    public static func encode(_ value: some Encodable, sorted: Bool = false) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = sorted ? [.withoutEscapingSlashes, .sortedKeys] : [.withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return #"{"type":"error","code":"server_error","message":"encoding failed"}"# }
        return String(decoding: data, as: UTF8.self)
    }
}
