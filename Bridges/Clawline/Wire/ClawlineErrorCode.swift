/// Clawline v1 error codes (`error.code` and HTTP error bodies), with the close code and HTTP
/// status each one carries: the protocol's one error table (`ClawlineError` holds the errors the
/// relay sends, with their messages).
public enum ClawlineErrorCode: String, Codable, Sendable, CaseIterable {
    case authFailed = "auth_failed"
    case tokenRevoked = "token_revoked"
    case invalidMessage = "invalid_message"
    case payloadTooLarge = "payload_too_large"
    case assetNotFound = "asset_not_found"
    /// Not a v1 code: an HTTP path the protocol does not have.
    case notFound = "not_found"
    case rateLimited = "rate_limited"
    case sessionReplaced = "session_replaced"
    case uploadFailedRetryable = "upload_failed_retryable"
    case serverError = "server_error"

    /// The close code that follows the error when the socket must close.
    public var closeCode: UInt16 {
        switch self {
        case .serverError: ClawlineCloseCode.serverError
        case .sessionReplaced: ClawlineCloseCode.normal
        default: ClawlineCloseCode.policy
        }
    }

    public var httpStatus: Int {
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

/// The WebSocket close codes of the protocol.
public enum ClawlineCloseCode {
    /// `session_replaced`, and a pairing that ended (`pair_result` failure).
    public static let normal: UInt16 = 1000
    /// Malformed JSON: closed without an `error`.
    public static let protocolError: UInt16 = 1002
    /// `invalid_message`, `auth_failed`, `token_revoked`, `rate_limited`, a refused `auth`.
    public static let policy: UInt16 = 1008
    public static let serverError: UInt16 = 1011
}

/// Why `auth_result` says `success: false`.
public enum AuthRefusal: String, Codable, Sendable, Error {
    case authFailed = "auth_failed"
    case tokenRevoked = "token_revoked"
    /// The device's `pair_request` still waits for a decision.
    case deviceNotApproved = "device_not_approved"
}

/// Why `pair_result` says `success: false` (the socket closes with 1000).
public enum PairRefusal: String, Codable, Sendable {
    /// The device is denylisted.
    case pairRejected = "pair_rejected"
    /// An admin said no.
    case pairDenied = "pair_denied"
    /// Nobody decided within the pending time.
    case pairTimeout = "pair_timeout"
}
