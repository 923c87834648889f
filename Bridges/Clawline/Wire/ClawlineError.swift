/// One `error` the relay sends (a frame on a socket, or an HTTP error body), and whether the
/// socket closes after it (with `code.closeCode`). Every error the relay's Clawline side sends is
/// named below, with its code and message, so the wording and the close decision live in one place.
public struct ClawlineError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: ClawlineErrorCode
    public var message: String
    /// The client message (`c_…`) the error is about.
    public var messageId: String?
    public var closes: Bool

    public init(_ code: ClawlineErrorCode, _ message: String, messageId: String? = nil, closes: Bool = false) {
        self.code = code
        self.message = message
        self.messageId = messageId
        self.closes = closes
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The `error` frame (also the HTTP error body, where `messageId` is absent).
    public var frame: ServerFrame.ErrorFrame { ServerFrame.ErrorFrame(code: code.rawValue, message: message, messageId: messageId) }

    /// The error with the message it is about.
    public func about(_ messageId: String?) -> ClawlineError {
        var copy = self
        copy.messageId = messageId
        return copy
    }

    public static func invalid(_ message: String, messageId: String? = nil, closes: Bool = false) -> ClawlineError {
        ClawlineError(.invalidMessage, message, messageId: messageId, closes: closes)
    }

    public static func tooLarge(_ message: String, messageId: String? = nil) -> ClawlineError {
        ClawlineError(.payloadTooLarge, message, messageId: messageId)
    }
}

// MARK: The socket's errors

extension ClawlineError {
    public static let binaryFrame = invalid("binary frames are not part of the protocol")
    public static let authenticateFirst = ClawlineError(.authFailed, "authenticate first", closes: true)
    public static let alreadyAuthenticated = invalid("this socket is already authenticated")
    public static let tooManyAuthAttempts = ClawlineError(.rateLimited, "too many auth attempts", closes: true)
    public static let deviceNotRead = ClawlineError(.serverError, "could not read the device", closes: true)
    public static let timelineNotOpened = ClawlineError(.serverError, "could not open the timeline", closes: true)
    public static let sessionReplaced = ClawlineError(.sessionReplaced, "another connection authenticated as this device", closes: true)
    public static let revoked = ClawlineError(.tokenRevoked, "this device was revoked", closes: true)

    public static let tooManyPairRequests = ClawlineError(.rateLimited, "too many pair requests", closes: true)
    public static let pendingQueueFull = ClawlineError(.rateLimited, "too many pending pairing requests", closes: true)
    public static let alreadyPaired = invalid("device is already paired; ask the operator to revoke it first", closes: true)
    public static let pairingNotStored = ClawlineError(.serverError, "pairing could not be stored", closes: true)
    public static let approvalNotStored = ClawlineError(.serverError, "approval could not be stored", closes: true)
    public static let onlyAdminsDecide = invalid("only an authenticated admin may decide pairing")
    public static let noPendingRequest = invalid("no pending request for that device (already resolved or expired)")

    public static func tooManyMessages(perSecond: Int) -> ClawlineError {
        ClawlineError(.rateLimited, "more than \(perSecond) messages per second")
    }

    public static func tooManyTypingEvents(perSecond: Int) -> ClawlineError {
        ClawlineError(.rateLimited, "more than \(perSecond) typing events per second")
    }

    public static let adminChannelOnly = invalid("only admin devices may write to the admin channel")
    public static let adminChannelUnavailable = ClawlineError(.serverError, "the admin channel could not be opened")
    public static let failedBefore = invalid("that message failed; send it again with a new id")
    public static let idReused = invalid("message id reused with different content")
    public static let queueFull = ClawlineError(.rateLimited, "too many queued messages")
    public static let notStored = ClawlineError(.serverError, "message could not be stored")
    public static func answerFailed(_ shown: String) -> ClawlineError { ClawlineError(.serverError, shown) }
    public static let answerAborted = ClawlineError(.serverError, "the answer was aborted")

    public static func assetNotFound(_ assetId: String) -> ClawlineError {
        ClawlineError(.assetNotFound, "asset \(assetId.prefix(64)) not found")
    }

    /// A second oversized message within the minute: the socket closes.
    public var repeatedTooOften: ClawlineError {
        ClawlineError(code, message + "; too many oversized messages", messageId: messageId, closes: true)
    }
}

// MARK: HTTP errors

extension ClawlineError {
    public static let upgradeRequired = invalid("WebSocket upgrade required")
    public static let noSuchEndpoint = ClawlineError(.notFound, "no such endpoint")
    public static let badBearer = ClawlineError(.authFailed, "missing or invalid bearer token")
    public static let unknownDevice = ClawlineError(.authFailed, "unknown device")
    public static let deviceRevoked = ClawlineError(.tokenRevoked, "device revoked")
    public static let notMultipart = invalid("expected multipart/form-data")
    public static let malformedMultipart = invalid("malformed multipart body")
    public static let wrongField = invalid("the multipart field must be named \"file\"")
    public static let uploadNotWritten = ClawlineError(.uploadFailedRetryable, "the upload could not be written; retry")
    public static let uploadNotReadBack = ClawlineError(.uploadFailedRetryable, "the upload could not be read back; retry")
    public static let uploadNotStored = ClawlineError(.uploadFailedRetryable, "the upload could not be stored; retry")
    public static let uploadNotRecorded = ClawlineError(.uploadFailedRetryable, "the upload could not be recorded; retry")
    public static let unexpectedBody = ClawlineError(.serverError, "unexpected body")
    public static let assetUnknown = ClawlineError(.assetNotFound, "asset not found")
    public static let assetFileMissing = ClawlineError(.assetNotFound, "asset file is missing")
    public static let assetNotRead = ClawlineError(.serverError, "could not read the asset")

    public static func uploadTooLarge(limit: Int) -> ClawlineError { tooLarge("uploads are limited to \(limit) bytes") }

    /// A download by a device its token may not use.
    public static func notAllowed(_ reason: AuthRefusal) -> ClawlineError {
        ClawlineError(reason == .tokenRevoked ? .tokenRevoked : .authFailed, "not allowed")
    }
}

/// Why a client frame was refused, and what the socket does.
public enum FrameRejection: Error, Equatable, Sendable {
    /// Not JSON: close 1002 and send nothing.
    case malformed
    case refused(ClawlineError)
}
