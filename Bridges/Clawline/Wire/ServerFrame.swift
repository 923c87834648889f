import Foundation
import RelayCore

/// Clawline v1 error codes (`error.code` and HTTP error bodies).
public enum ClawlineErrorCode: String, Sendable {
    case authFailed = "auth_failed"
    case tokenRevoked = "token_revoked"
    case invalidMessage = "invalid_message"
    case payloadTooLarge = "payload_too_large"
    case assetNotFound = "asset_not_found"
    case notFound = "not_found"
    case rateLimited = "rate_limited"
    case sessionReplaced = "session_replaced"
    case uploadFailedRetryable = "upload_failed_retryable"
    case serverError = "server_error"

    /// The close code that follows the error when the socket must close.
    var closeCode: UInt16 {
        switch self {
        case .serverError: 1011
        case .sessionReplaced: 1000
        default: 1008
        }
    }

    var httpStatus: Int {
        switch self {
        case .invalidMessage: 400
        case .authFailed: 401
        case .tokenRevoked: 403
        case .assetNotFound, .notFound: 404
        case .payloadTooLarge: 413
        case .rateLimited: 429
        case .uploadFailedRetryable: 503
        case .serverError, .sessionReplaced: 500
        }
    }
}

/// Server → client frames, exactly the protocol's JSON.
enum ServerFrame {
    struct ErrorFrame: Encodable {
        var type = "error"
        var code: String
        var message: String
        var messageId: String?
    }

    struct Ack: Encodable {
        var type = "ack"
        var id: String
    }

    struct PairResult: Encodable {
        var type = "pair_result"
        var success: Bool
        var token: String?
        var userId: String?
        var reason: String?
    }

    struct PairApprovalRequest: Encodable {
        var type = "pair_approval_request"
        var deviceId: String
        var claimedName: String?
        var deviceInfo: JSONValue
    }

    struct AuthResult: Encodable {
        var type = "auth_result"
        var success: Bool
        var reason: String?
        var userId: String?
        var sessionId: String?
        var isAdmin: Bool?
        var replayCount: Int?
        var replayTruncated: Bool?
        var historyReset: Bool?
    }

    struct Message: Encodable {
        var type = "message"
        var id: String
        var role: String
        var content: String
        var timestamp: Int64
        var streaming: Bool
        var deviceId: String?
        var attachments: JSONValue?
        var channelType: String
    }

    struct Typing: Encodable {
        var type = "typing"
        var role = "assistant"
        var active: Bool
        var channelType: String
    }

    /// Who the device's user is and whether it may use the admin channel; sent after a
    /// successful `auth_result`, before the replay.
    struct UserInfo: Encodable {
        var type = "user_info"
        var userId: String
        var isAdmin: Bool
    }

    struct Version: Encodable {
        var protocolVersion = 1
    }

    /// The reference encoding of a stored event (`FastFrames.message` writes the same bytes by hand).
    static func message(_ event: ChatEvent) -> Message {
        Message(
            id: event.id,
            role: event.role.rawValue,
            content: event.content,
            timestamp: event.timestampMillis,
            streaming: false,
            deviceId: event.role == .user ? event.deviceID : nil,
            attachments: JSONValue.parse(AttachmentWire.json(event.attachmentsJSON, eventID: event.id)),
            channelType: ClawlineChannel(owner: event.userID).rawValue
        )
    }

    static func httpError(_ code: ClawlineErrorCode, _ message: String) -> String {
        FrameEncoder.encode(ErrorFrame(code: code.rawValue, message: message))
    }
}

/// One JSON encoder for the loop thread.
enum FrameEncoder {
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return #"{"type":"error","code":"server_error","message":"encoding failed"}"# }
        return String(decoding: data, as: UTF8.self)
    }
}
