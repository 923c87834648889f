import RelayKit

// The `data` of the server's replies, in the form the app decodes (the names it expects where the
// real server differs: `askResponse`, `streamStarted`). The upstream account reads some of them back.

/// The first frame on every socket; the app counts as connected only once it decodes.
public struct Welcome: CompanionPayload, Equatable {
    public static let type = "welcome"
    public static let serverVersion = "1.0.0"
    public static let capabilities = ["chat", "streaming", "permissions", "file-operations", "session-management"]

    public var clientId: String
    public var serverVersion: String?
    @AlwaysPresent public var claudeCodeVersion: String?
    public var capabilities: [String]
    public var maxSessions: Int

    /// `claudeCodeVersion`: the version of Claude Code behind the default backend (null when none).
    public init(
        clientId: String,
        maxSessions: Int,
        claudeCodeVersion: String? = nil,
        serverVersion: String? = Welcome.serverVersion,
        capabilities: [String] = Welcome.capabilities
    ) {
        self.clientId = clientId
        self.serverVersion = serverVersion
        self.claudeCodeVersion = claudeCodeVersion
        self.capabilities = capabilities
        self.maxSessions = maxSessions
    }

    /// What a client needs of a server's welcome: only that it came, and its version.
    public init(_ data: CompanionFields) {
        self.init(
            clientId: data.string("clientId") ?? "",
            maxSessions: Int(data["maxSessions"]?.intValue ?? 0),
            serverVersion: data.string("serverVersion")
        )
    }
}

public struct Pong: CompanionPayload, Equatable {
    public static let type = "pong"
    public var serverTime: String
    /// The `timestamp` of the ping, as it was sent.
    public var clientTimestamp: JSONValue?

    public init(serverTime: String, clientTimestamp: JSONValue?) {
        self.serverTime = serverTime
        self.clientTimestamp = clientTimestamp
    }
}

public struct Subscribed: CompanionPayload, Equatable {
    public static let type = "subscribed"
    public var events: [String]
    public var sessionIds: [String]
    public var success = true

    public init(events: [String], sessionIds: [String]) {
        self.events = events
        self.sessionIds = sessionIds
    }
}

/// The answer to a `claudeCommand`; a failure is one too (`success: false`, a non-empty `error`).
public struct ClaudeResponse: CompanionPayload, Equatable {
    public static let type = "claudeResponse"
    public var content: String
    public var success: Bool
    @AlwaysPresent public var sessionId: String?
    @AlwaysPresent public var error: String?

    public init(content: String, success: Bool, sessionId: String?, error: String?) {
        self.content = content
        self.success = success
        self.sessionId = sessionId
        self.error = error
    }

    public static func answer(_ content: String, sessionID: String) -> ClaudeResponse {
        ClaudeResponse(content: content, success: true, sessionId: sessionID, error: nil)
    }

    public static func failure(_ error: String, sessionID: String?) -> ClaudeResponse {
        ClaudeResponse(content: "", success: false, sessionId: sessionID, error: error)
    }

    /// Tolerant: `success` defaults to "no error", `content` to empty, an empty error is none.
    public init(_ data: CompanionFields) {
        let error = data.nonEmptyString("error")
        self.init(
            content: data.string("content") ?? "",
            success: data.bool("success") ?? (error == nil),
            sessionId: data.string("sessionId"),
            error: error
        )
    }
}

/// The guide's answer to `ask`: the Claude CLI's JSON result, or an error.
public struct AskResponse: CompanionPayload, Equatable {
    public static let type = "askResponse"
    public var success: Bool
    public var response: CLIResult?
    @AlwaysPresent public var error: String?

    public init(success: Bool, response: CLIResult?, error: String?) {
        self.success = success
        self.response = response
        self.error = error
    }
}

/// The Claude CLI's result object, as `askResponse.response` and `POST /api/ask` carry it.
public struct CLIResult: Encodable, Sendable, Equatable {
    public var type = "result"
    public var subtype = "success"
    public var isError = false
    public var durationMillis: Double
    public var numTurns = 1
    public var result: String
    public var sessionID: String

    public init(result: String, sessionID: String, durationMillis: Double) {
        self.result = result
        self.sessionID = sessionID
        self.durationMillis = durationMillis
    }

    private enum CodingKeys: String, CodingKey {
        case type, subtype, result
        case isError = "is_error"
        case durationMillis = "duration_ms"
        case numTurns = "num_turns"
        case sessionID = "session_id"
    }
}

/// The relay's (and the guide's) reply to `streamStart`; the real server replies `streamStart`.
public struct StreamStarted: CompanionPayload, Equatable {
    public static let type = "streamStarted"
    public var sessionId: String
    public var sessionName: String
    public var workingDirectory: String

    public init(sessionId: String, sessionName: String, workingDirectory: String) {
        self.sessionId = sessionId
        self.sessionName = sessionName
        self.workingDirectory = workingDirectory
    }
}

/// The reply to `streamSend`: the session took the prompt.
public struct SessionStatus: CompanionPayload, Equatable {
    public static let type = "sessionStatus"
    public var sessionId: String
    public var status: String
    /// ISO 8601.
    public var lastActivity: String
    public var messageCount: Int

    public init(sessionId: String, status: String, lastActivity: String, messageCount: Int) {
        self.sessionId = sessionId
        self.status = status
        self.lastActivity = lastActivity
        self.messageCount = messageCount
    }
}

public struct WorkingDirectorySet: CompanionPayload, Equatable {
    public static let type = "workingDirectorySet"
    public var workingDirectory: String
    public var success = true

    public init(workingDirectory: String) { self.workingDirectory = workingDirectory }
}

public struct DeviceRegistered: CompanionPayload, Equatable {
    public static let type = "deviceRegistered"
    public var success = true
    public var message = "Device registered for push notifications"

    public init() {}
}

/// An error frame's `data`: code, a non-empty message, details, the session when there is one.
public struct ErrorData: CompanionPayload, Equatable {
    public static let type = "error"
    public var code: String
    public var message: String
    public var details: [String: JSONValue]
    public var sessionId: String?

    public init(code: String, message: String, details: [String: JSONValue] = [:], sessionId: String? = nil) {
        self.code = code
        self.message = message
        self.details = details
        self.sessionId = sessionId
    }
}
