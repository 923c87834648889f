/// The REST refusals whose status and body do not depend on a `CompanionErrorCode`: the real
/// server's 401 bodies, and the relay's own answers to malformed or unknown requests.
public enum CompanionHTTPError: Error, Sendable, Equatable {
    /// No token at all (the real server's body).
    case missingToken
    /// A token that is not the listener's.
    case invalidToken
    /// A plain HTTP request to the WebSocket path.
    case upgradeRequired
    case notFound(method: String, path: String)
    case bodyTooLarge(limit: Int)
    case unreadableBody
    case invalidJSON
    case internalError
    case sessionNotFound(String)
    /// `sessions/continue` with no such session: the real server's short body.
    case continueNotFound
    case continueFieldsRequired
    case promptRequired
    case promptTooLarge
    /// `POST /api/stream/start` with a prompt past the limit.
    case streamPromptTooLarge
    case sessionsUnreadable
    case tooManyWaiting
    case turnFailed(reason: String)
    /// The device was revoked or denylisted on the relay.
    case deviceRevoked(deviceID: String)

    public var status: Int {
        switch self {
        case .missingToken, .invalidToken: 401
        case .deviceRevoked: 403
        case .upgradeRequired: 426
        case .notFound, .sessionNotFound, .continueNotFound: 404
        case .bodyTooLarge, .promptTooLarge, .streamPromptTooLarge: 413
        case .unreadableBody, .invalidJSON, .continueFieldsRequired, .promptRequired: 400
        case .internalError, .sessionsUnreadable, .turnFailed: 500
        case .tooManyWaiting: 503
        }
    }

    public var body: ErrorBody {
        switch self {
        case .missingToken: ErrorBody("Authentication required", message: "Please provide a valid auth token")
        case .invalidToken: ErrorBody("Invalid token", message: "The provided auth token is not valid")
        case .upgradeRequired: ErrorBody("Upgrade Required", message: "this is the Companion WebSocket endpoint")
        case .notFound(let method, let path): ErrorBody("Not found", message: "\(method) \(path.prefix(200)) is not a Companion endpoint")
        case .bodyTooLarge(let limit): ErrorBody("Payload too large", message: "the body is larger than \(limit) bytes")
        case .unreadableBody: ErrorBody("Bad request", message: "the body could not be read")
        case .invalidJSON: ErrorBody("Invalid JSON", message: "the body must be a JSON object")
        case .internalError: ErrorBody("Internal error")
        case .sessionNotFound(let id): ErrorBody("Session not found", message: "Session '\(id.prefix(128))' does not exist or has expired")
        case .continueNotFound: ErrorBody("Session not found")
        case .continueFieldsRequired: ErrorBody("sessionId and workingDirectory are required")
        case .promptRequired: ErrorBody("Prompt is required")
        case .promptTooLarge: ErrorBody("the prompt is larger than \(CompanionLimits.maxPromptBytes / 1024) KB")
        case .streamPromptTooLarge: ErrorBody("the prompt is too large")
        case .sessionsUnreadable: ErrorBody("the sessions could not be read")
        case .tooManyWaiting: ErrorBody("too many requests are waiting for answers; try again later")
        case .turnFailed(let reason): ErrorBody("Failed to execute command: \(reason)")
        case .deviceRevoked(let deviceID):
            ErrorBody("Device revoked", message: "this device was revoked: run clawrelay devices allow \(deviceID.prefix(160)) on the relay")
        }
    }
}

/// A REST error body: `{error, message?, code?}`.
public struct ErrorBody: Encodable, Sendable, Equatable {
    public var error: String
    public var message: String?
    public var code: String?

    public init(_ error: String, message: String? = nil, code: String? = nil) {
        self.error = error
        self.message = message
        self.code = code
    }

    /// A `CompanionError` as the REST calls that run or open sessions answer it.
    public static func refusal(_ error: CompanionError) -> ErrorBody {
        switch error.code {
        case .invalidWorkingDirectory: ErrorBody("Invalid working directory: \(error.message)")
        case .sessionLimit: ErrorBody("Too many sessions", message: error.message)
        default: ErrorBody(error.message)
        }
    }
}
