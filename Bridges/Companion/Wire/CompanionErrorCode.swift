import RelayKit

/// The protocol's error codes: `data.code` (and the server form's `error.code`) of an `error`
/// frame, with the HTTP status a REST answer for the same failure has.
public enum CompanionErrorCode: String, Sendable, CaseIterable {
    case invalidMessage = "INVALID_MESSAGE"
    case invalidSession = "INVALID_SESSION"
    case invalidWorkingDirectory = "INVALID_WORKING_DIRECTORY"
    case sessionLimit = "SESSION_LIMIT"
    case queueFull = "QUEUE_FULL"
    case payloadTooLarge = "PAYLOAD_TOO_LARGE"
    case unknownMessageType = "UNKNOWN_MESSAGE_TYPE"
    case noPendingPermission = "NO_PENDING_PERMISSION"
    case commandFailed = "COMMAND_FAILED"
    case storeFailed = "STORE_FAILED"
    /// A server refused `streamStart` (`success: false`): how the client side names it.
    case streamStartFailed = "STREAM_START_FAILED"

    public var httpStatus: Int {
        switch self {
        case .invalidMessage: 400
        case .invalidWorkingDirectory: 403
        case .invalidSession: 404
        case .payloadTooLarge: 413
        case .sessionLimit, .queueFull: 429
        // Nothing waits for the answer (none asked, or answered first elsewhere).
        case .noPendingPermission: 409
        case .unknownMessageType, .commandFailed, .storeFailed, .streamStartFailed: 500
        }
    }
}

/// How a Companion server closes a socket: only a bad token, before anything is sent.
public struct CompanionClose: Sendable, Equatable {
    public var code: UInt16
    public var reason: String

    public init(code: UInt16, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// A bad or missing token: the app (and the relay's own upstream account) reads 1008 as refused.
    public static let authenticationRequired = CompanionClose(code: 1008, reason: "Authentication required")
    /// The device was revoked (or denylisted) on the relay: refused like a bad token, saying so.
    public static let deviceRevoked = CompanionClose(code: 1008, reason: "Device revoked")
}

/// A protocol error: a code from the table, a message for people (never empty: the app drops an
/// error frame without one), the session it concerns and details.
public struct CompanionError: Error, Sendable, Equatable {
    public var code: CompanionErrorCode
    public var message: String
    public var sessionID: String?
    public var details: [String: JSONValue]

    public init(_ code: CompanionErrorCode, _ message: String, sessionID: String? = nil, details: [String: JSONValue] = [:]) {
        self.code = code
        self.message = message
        self.sessionID = sessionID
        self.details = details
    }

    /// The `data` the app decodes.
    public var data: ErrorData { ErrorData(code: code.rawValue, message: message, details: details, sessionId: sessionID) }

    /// The real server's `error` field.
    public var envelope: ErrorEnvelope { ErrorEnvelope(code: code.rawValue, message: message) }
}

/// Every message the relay sends with a code, in one place.
extension CompanionError {
    public static func invalid(_ message: String) -> CompanionError { CompanionError(.invalidMessage, message) }

    public static func invalidSession(_ sessionID: String) -> CompanionError {
        CompanionError(.invalidSession, "session \(sessionID.prefix(64)) not found", sessionID: sessionID)
    }

    public static func outsideRoot(_ raw: String) -> CompanionError {
        CompanionError(.invalidWorkingDirectory, "\(raw.prefix(200)) is not inside the relay's projects root")
    }

    public static func sessionLimit(_ maxSessions: Int) -> CompanionError {
        CompanionError(.sessionLimit, "Maximum number of sessions (\(maxSessions)) reached", details: ["maxSessions": .int(Int64(maxSessions))])
    }

    public static func unknownType(_ type: String) -> CompanionError {
        CompanionError(.unknownMessageType, "No handler registered for message type: \(type.prefix(64))")
    }

    public static func noPendingPermission(sessionID: String?) -> CompanionError {
        let place = sessionID.map { " in session \($0.prefix(64))" } ?? ""
        return CompanionError(.noPendingPermission, "no permission request is waiting for an answer\(place)", sessionID: sessionID)
    }

    /// A prompt field past `CompanionLimits.maxPromptBytes`.
    public static func tooLarge(_ field: String) -> CompanionError {
        CompanionError(.payloadTooLarge, "\(field) is larger than \(CompanionLimits.maxPromptBytes / 1024) KB")
    }

    public static let promptTooLarge = CompanionError(.payloadTooLarge, "the prompt is too large")

    public static func queueFull(_ maxQueued: Int, sessionID: String? = nil) -> CompanionError {
        CompanionError(.queueFull, "too many commands are waiting in this session (at most \(maxQueued))", sessionID: sessionID)
    }

    public static func alreadyAnswered(sessionID: String? = nil) -> CompanionError {
        CompanionError(.invalidMessage, "this request was already answered; send it again with a new requestId", sessionID: sessionID)
    }

    public static func alreadyFailed(sessionID: String? = nil) -> CompanionError {
        CompanionError(.invalidMessage, "this request failed; send it again with a new requestId", sessionID: sessionID)
    }

    public static func requestIDReused(sessionID: String? = nil) -> CompanionError {
        CompanionError(.invalidMessage, "requestId reused with a different command", sessionID: sessionID)
    }

    public static func notStored(_ what: String, sessionID: String? = nil) -> CompanionError {
        CompanionError(.storeFailed, "the \(what) could not be stored", sessionID: sessionID)
    }

    public static let sessionNotOpened = CompanionError(.storeFailed, "the session could not be opened")
    public static let sessionNotRead = CompanionError(.storeFailed, "the session could not be read")

    /// A turn that ended without an answer, as the socket that did not ask by `claudeCommand`/`ask` hears it.
    public static func commandFailed(_ reason: String, sessionID: String) -> CompanionError {
        CompanionError(.commandFailed, reason, sessionID: sessionID)
    }

}

/// Limits a client frame is held to.
public enum CompanionLimits {
    /// A prompt or command, in UTF-8 bytes.
    public static let maxPromptBytes = 256 * 1024
    public static let maxSubscribedSessions = 100
    public static let maxRequestIDBytes = 256
}
