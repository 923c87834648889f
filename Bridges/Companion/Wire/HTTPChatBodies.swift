import Foundation
import RelayKit

/// `POST /api/chat` from the newest (HTTP + APNs) Companion app (companion-http.md §3.1):
/// `{message, projectPath, sessionId?, deviceToken, mode, timestamp, workspace?, attachments?,
/// autoResponse?}`. `attachments` and `autoResponse` are read and ignored (the app hides the one
/// and its server never acted on the other).
public struct HTTPChatPost: Equatable, Sendable {
    public static let maxMessageBytes = 100_000
    public static let workspace = "__workspace__"

    public var message: String
    public var projectPath: String
    public var sessionID: String?
    /// The APNs token, 64 lower-case hex characters: where the answer goes, and the device.
    public var deviceToken: String
    public var planning: Bool

    /// The error string the app shows ("Server error: 400: <error>") when the post is refused.
    public static func read(_ fields: CompanionFields) -> Result<HTTPChatPost, HTTPChatRefusal> {
        guard let raw = fields.string("message") else { return .failure(.init("Message is required")) }
        let message = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !message.isEmpty else { return .failure(.init("Message is required")) }
        guard message.utf8.count <= maxMessageBytes else { return .failure(.init("Message is larger than 100000 bytes")) }
        guard let token = fields.string("deviceToken")?.lowercased(), !token.isEmpty else {
            return .failure(.init("Device token is required for APNS message delivery"))
        }
        guard token.utf8.count == 64, token.allSatisfy(\.isHexDigit) else {
            return .failure(.init("deviceToken must be 64 hexadecimal characters"))
        }
        let project = fields.string("projectPath") ?? (fields.bool("workspace") == true ? workspace : "")
        guard !project.isEmpty, project.utf8.count <= 4096 else { return .failure(.init("projectPath is required")) }
        let session = fields.string("sessionId").flatMap { $0.isEmpty ? nil : $0 }
        if let session, session.utf8.count > 128 || session.contains(where: { $0.isNewline || $0 == "\0" }) {
            return .failure(.init("sessionId must be 1 to 128 printable characters"))
        }
        return .success(
            HTTPChatPost(
                message: message,
                projectPath: project,
                sessionID: session,
                deviceToken: token,
                planning: fields.string("mode") == "planning"
            )
        )
    }

    /// What makes two posts the same message (the 5-second duplicate rule).
    public var fingerprint: String { Digest.sha256Hex("\(message)\u{1F}\(sessionID ?? "")\u{1F}\(projectPath)") }
}

/// A refused `POST /api/chat` (4xx): the app shows `error`.
public struct HTTPChatRefusal: Error, Encodable, Equatable, Sendable {
    public var success = false
    public var error: String

    public init(_ error: String) { self.error = error }
}

/// The acknowledgement the app accepts (`success: true` and `deliveryMethod: "apns"`); it stores
/// `sessionId` for the project at once, so Stop works on the first turn.
public struct HTTPChatAccepted: Encodable, Equatable, Sendable {
    public var success = true
    public var message: String
    public var deliveryMethod = "apns"
    public var sessionId: String
    public var requestId: String
    public var messageId: String
    public var projectPath: String
    public var timestamp: String
    public var duplicate: Bool?

    public init(sessionId: String, requestId: String, messageId: String, projectPath: String, timestamp: String, duplicate: Bool = false) {
        message = duplicate ? "Duplicate message detected - not processed" : "Message queued for APNS delivery"
        self.sessionId = sessionId
        self.requestId = requestId
        self.messageId = messageId
        self.projectPath = projectPath
        self.timestamp = timestamp
        self.duplicate = duplicate ? true : nil
    }
}

/// `POST /api/chat/kill {sessionId, reason, deviceToken?}` → 200 (the app forgets the session).
public struct HTTPChatKilled: Encodable, Equatable, Sendable {
    public var success = true
    public var sessionId: String
    public var message = "Session terminated"
    public var processKilled: Bool

    public init(sessionId: String, processKilled: Bool) {
        self.sessionId = sessionId
        self.processKilled = processKilled
    }
}

/// `GET /api/messages/:id`: the text at the top level (builds of 2025-08/09) and under `result`
/// (newest builds); `timestamp` in milliseconds since 1970, a number.
public struct HTTPStoredMessage: Encodable, Equatable, Sendable {
    public struct Result: Encodable, Equatable, Sendable {
        public var id: String
        public var content: String
        public var timestamp: Int64
        public var metadata: [String: String]
    }

    public var success = true
    public var id: String
    public var content: String
    public var timestamp: Int64
    public var result: Result

    public init(id: String, content: String, timestamp: Int64, metadata: [String: String]) {
        self.id = id
        self.content = content
        self.timestamp = timestamp
        result = Result(id: id, content: content, timestamp: timestamp, metadata: metadata)
    }
}

/// `GET /api/messages/:id` for an id the relay does not keep.
public struct HTTPMessageNotFound: Encodable, Equatable, Sendable {
    public var success = false
    public var error = "NOT_FOUND"
    public var message = "Message not found"

    public init() {}
}

/// The frame the HTTP app's project list reads on its optional socket while a project's turn runs
/// (top-level fields, no `data`): `isProcessing` shows the badge, `elapsedSeconds` the time.
public struct HTTPHeartbeat: Encodable, Equatable, Sendable {
    public var type = "heartbeat"
    public var sessionId: String
    public var projectPath: String
    public var activity: String
    public var elapsedSeconds: Int
    public var isProcessing: Bool
    public var timestamp: String

    public init(sessionId: String, projectPath: String, activity: String, elapsedSeconds: Int, isProcessing: Bool, timestamp: String) {
        self.sessionId = sessionId
        self.projectPath = projectPath
        self.activity = activity
        self.elapsedSeconds = elapsedSeconds
        self.isProcessing = isProcessing
        self.timestamp = timestamp
    }
}
