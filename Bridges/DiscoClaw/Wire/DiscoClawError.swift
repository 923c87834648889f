/// Every error the DiscoClaw protocol answers, in one table: its HTTP status, its body and, for a
/// socket, its close code and reason.
///
/// Two body shapes, as the public server has them: the auth routes answer `{"error": message}`
/// (the app decodes register errors as `[String: String]`, so every value is a string), every
/// other route Fastify's `{"statusCode", "error", "message"}`.
public enum DiscoClawError: Error, Equatable, Sendable, CustomStringConvertible {
    // Auth: `{"error": …}` bodies.
    case missingToken
    case invalidToken
    case registrationDisabled
    case invalidSetupToken
    case tooManyRegistrations
    case platformRequired
    case nameTooLong(maxBytes: Int)
    case tooManyDevices(limit: Int)
    // Everything else: Fastify bodies.
    case notFound
    case upgradeRequired
    case payloadTooLarge(maxBytes: Int)
    case bodyUnreadable
    case bodyNotObject
    case titleNotString
    case titleTooLong(maxBytes: Int)
    case archivedNotBoolean
    /// `configured` lists the backends there are (the creation says them, a `PATCH` does not).
    case unknownBackend(String, configured: [String]?)
    case badQuery(name: String)
    case contentRequired
    case clientIDNotString
    case clientIDLength(maxBytes: Int)
    case clientIDReusedForAnotherMessage
    case clientIDUsed
    case queueFull
    case turnRejected(String)
    case unknownAttachment(String)
    case storeFailed
    case unexpectedBody
    // Socket closes.
    case deviceRevoked

    public var status: Int {
        switch self {
        case .missingToken, .invalidToken, .invalidSetupToken: 401
        case .registrationDisabled, .deviceRevoked: 403
        case .notFound: 404
        case .tooManyDevices, .clientIDReusedForAnotherMessage, .clientIDUsed: 409
        case .payloadTooLarge: 413
        case .upgradeRequired: 426
        case .tooManyRegistrations, .queueFull: 429
        case .storeFailed, .unexpectedBody: 500
        case .platformRequired, .nameTooLong, .bodyUnreadable, .bodyNotObject, .titleNotString, .titleTooLong, .archivedNotBoolean,
            .unknownBackend, .badQuery, .contentRequired, .clientIDNotString, .clientIDLength, .turnRejected, .unknownAttachment:
            400
        }
    }

    public var message: String {
        switch self {
        case .missingToken: "Missing authorization token"
        case .invalidToken: "Invalid token"
        case .registrationDisabled: "Registration is disabled. Set setup_token in [discoclaw] to allow devices to register."
        case .invalidSetupToken: "Invalid setup token"
        case .tooManyRegistrations: "Too many registrations; try again in a minute"
        case .platformRequired: "platform is required (ios or macos)"
        case .nameTooLong(let maxBytes): "name is longer than \(maxBytes) bytes"
        case .tooManyDevices(let limit): "This user already has \(limit) devices; remove one first"
        case .notFound: "Not Found"
        case .upgradeRequired: "/ws is the WebSocket endpoint"
        case .payloadTooLarge(let maxBytes): "the body is larger than \(maxBytes) bytes"
        case .bodyUnreadable: "the body could not be read"
        case .bodyNotObject: "body must be a JSON object"
        case .titleNotString: "title must be a string"
        case .titleTooLong(let maxBytes): "title is longer than \(maxBytes) bytes"
        case .archivedNotBoolean: "archived must be a boolean"
        case .unknownBackend(let name, let configured?): "no backend named \(name.prefix(64)); configured: \(configured.joined(separator: ", "))"
        case .unknownBackend(let name, nil): "no backend named \(name.prefix(64))"
        case .badQuery(let name): "\(name) must be a non-negative integer"
        case .contentRequired: "content is required"
        case .clientIDNotString: "clientId must be a string"
        case .clientIDLength(let maxBytes): "clientId must be 1 to \(maxBytes) bytes"
        case .clientIDReusedForAnotherMessage: "clientId was already used for a different message"
        case .clientIDUsed: "clientId was already used"
        case .queueFull: "too many messages waiting in this conversation; wait for an answer"
        case .turnRejected(let reason): reason
        case .unknownAttachment(let asset): "unknown attachment \(asset)"
        case .storeFailed: "the store failed; try again"
        case .unexpectedBody: "unexpected body"
        case .deviceRevoked: "Device revoked"
        }
    }

    /// The auth routes' `{"error": …}` shape rather than Fastify's.
    public var isAuthShaped: Bool {
        switch self {
        case .missingToken, .invalidToken, .registrationDisabled, .invalidSetupToken, .tooManyRegistrations, .platformRequired, .nameTooLong,
            .tooManyDevices:
            true
        default:
            false
        }
    }

    /// The response body.
    public var body: DiscoClawErrorBody {
        isAuthShaped ? DiscoClawErrorBody(error: message) : DiscoClawErrorBody(statusCode: status, error: Self.reasonPhrase(status), message: message)
    }

    /// The close code of a socket this ends: a refused token, a revoked device (policy violation).
    public var closeCode: UInt16? {
        switch self {
        case .invalidToken, .deviceRevoked: 1008
        default: nil
        }
    }

    public var description: String { "\(status) \(message)" }

    /// Fastify's `error`: the status's reason phrase.
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 413: "Payload Too Large"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        default: "Internal Server Error"
        }
    }
}

/// An error body in either shape: `{"error"}` or `{"statusCode", "error", "message"}`. A server's
/// body decodes whatever it holds of these (a missing or mistyped member is nil).
public struct DiscoClawErrorBody: Codable, Equatable, Sendable {
    public var statusCode: Int?
    public var error: String?
    public var message: String?

    public init(statusCode: Int? = nil, error: String?, message: String? = nil) {
        self.statusCode = statusCode
        self.error = error
        self.message = message
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        statusCode = try? container.decodeIfPresent(Int.self, forKey: .statusCode)
        error = try? container.decodeIfPresent(String.self, forKey: .error)
        message = try? container.decodeIfPresent(String.self, forKey: .message)
    }

    /// What went wrong, for a log line: Fastify's `message`, else the auth shape's `error`.
    public var reason: String? {
        if let message, !message.isEmpty { return message }
        return error
    }
}
