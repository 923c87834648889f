import RelayKit

// The `data` of client → server frames: the relay's downstream reads them, its upstream account
// writes them. Each reader is tolerant where the app or the guide is (a lenient field of another
// type counts as absent) and names the field it refuses.

/// `claudeCommand {command, projectPath?, sessionId?}`: the real app's chat turn (it sends no `args`).
public struct ClaudeCommand: CompanionPayload, Equatable {
    public static let type = "claudeCommand"
    public var command: String
    public var projectPath: String?
    public var sessionId: String?

    public init(command: String, projectPath: String?, sessionId: String?) {
        self.command = command
        self.projectPath = projectPath
        self.sessionId = sessionId
    }

    public init(_ data: CompanionFields) throws(CompanionError) {
        self.init(command: try data.prompt("command"), projectPath: data.string("projectPath"), sessionId: data.string("sessionId"))
    }
}

/// `ask {prompt, workingDirectory?, sessionId?}` (the guide), answered with `askResponse`.
public struct Ask: CompanionPayload, Equatable {
    public static let type = "ask"
    public var prompt: String
    public var workingDirectory: String?
    public var sessionId: String?

    public init(prompt: String, workingDirectory: String?, sessionId: String?) {
        self.prompt = prompt
        self.workingDirectory = workingDirectory
        self.sessionId = sessionId
    }

    public init(_ data: CompanionFields) throws(CompanionError) {
        self.init(prompt: try data.prompt("prompt"), workingDirectory: data.string("workingDirectory"), sessionId: data.string("sessionId"))
    }
}

/// `streamStart {sessionId?, workingDirectory?, prompt?|initialPrompt?}`: opens (or finds) the
/// directory's session; a prompt runs in it at once.
public struct StreamStart: CompanionPayload, Equatable {
    public static let type = "streamStart"
    public var sessionId: String?
    public var workingDirectory: String?
    public var prompt: String?
    public var initialPrompt: String?

    public init(sessionId: String?, workingDirectory: String?, prompt: String? = nil, initialPrompt: String? = nil) {
        self.sessionId = sessionId
        self.workingDirectory = workingDirectory
        self.prompt = prompt
        self.initialPrompt = initialPrompt
    }

    public init(_ data: CompanionFields) throws(CompanionError) {
        prompt = try data.optionalString("prompt")
        initialPrompt = try data.optionalString("initialPrompt")
        if let text = prompt ?? initialPrompt, text.utf8.count > CompanionLimits.maxPromptBytes { throw .promptTooLarge }
        sessionId = try data.optionalString("sessionId")
        workingDirectory = try data.optionalString("workingDirectory")
    }

    /// What runs in the session: `prompt`, else `initialPrompt`.
    public var text: String? { prompt ?? initialPrompt }
}

/// `streamSend {sessionId, prompt}` to a session that exists.
public struct StreamSend: CompanionPayload, Equatable {
    public static let type = "streamSend"
    public var sessionId: String
    public var prompt: String

    public init(sessionId: String, prompt: String) {
        self.sessionId = sessionId
        self.prompt = prompt
    }

    public init(_ data: CompanionFields) throws(CompanionError) {
        sessionId = try data.requiredString("sessionId")
        prompt = try data.prompt("prompt")
    }
}

/// `streamClose {sessionId, reason?}`: the socket lets the session go (it stays).
public struct StreamClose: CompanionPayload, Equatable {
    public static let type = "streamClose"
    public var sessionId: String
    public var reason: String?

    public init(sessionId: String, reason: String? = nil) {
        self.sessionId = sessionId
        self.reason = reason
    }

    public init(_ data: CompanionFields) throws(CompanionError) {
        self.init(sessionId: try data.requiredString("sessionId"), reason: data.string("reason"))
    }
}

/// `subscribe {events, sessionIds?}`: the app lists events it shows; servers do not filter by them.
public struct Subscribe: CompanionPayload, Equatable {
    public static let type = "subscribe"
    public var events: [String]
    public var sessionIds: [String]

    public init(events: [String], sessionIds: [String]) {
        self.events = events
        self.sessionIds = sessionIds
    }

    public init(_ data: CompanionFields) throws(CompanionError) {
        events = try data.strings("events", required: true)
        sessionIds = try data.strings("sessionIds", required: false)
        guard sessionIds.count <= CompanionLimits.maxSubscribedSessions else {
            throw .invalid("at most \(CompanionLimits.maxSubscribedSessions) sessionIds")
        }
    }
}

/// `setWorkingDirectory {workingDirectory}`: where this socket's `ask`/`streamStart` work by default.
public struct SetWorkingDirectory: CompanionPayload, Equatable {
    public static let type = "setWorkingDirectory"
    public var workingDirectory: String

    public init(workingDirectory: String) { self.workingDirectory = workingDirectory }

    public init(_ data: CompanionFields) throws(CompanionError) { workingDirectory = try data.requiredString("workingDirectory") }
}

/// `registerDevice`: the guide's `{deviceToken, deviceInfo}` or the app's `{token, platform}`.
public struct RegisterDevice: CompanionPayload, Equatable {
    public static let type = "registerDevice"
    public var deviceToken: String?
    public var token: String?
    public var platform: String?
    public var deviceInfo: JSONValue?

    public init(deviceToken: String? = nil, token: String? = nil, platform: String? = nil, deviceInfo: JSONValue? = nil) {
        self.deviceToken = deviceToken
        self.token = token
        self.platform = platform
        self.deviceInfo = deviceInfo
    }

    public init(_ data: CompanionFields) throws(CompanionError) {
        deviceToken = try data.optionalString("deviceToken")
        token = try data.optionalString("token")
        platform = data.string("platform")
        deviceInfo = data["deviceInfo"]
    }

    /// The APNs token in either form.
    public var apnsToken: String? { deviceToken ?? token }

    /// The platform in either form (`deviceInfo` as a string or its `platform`), `ios` by default.
    public var platformName: String { platform ?? deviceInfo?.stringValue ?? deviceInfo?["platform"]?.stringValue ?? "ios" }
}

/// `ping {timestamp?}`: the timestamp, whatever JSON it is, comes back as `clientTimestamp`.
public struct Ping: CompanionPayload, Equatable {
    public static let type = "ping"
    public var timestamp: JSONValue?

    public init(timestamp: JSONValue?) { self.timestamp = timestamp }

    public init(_ data: CompanionFields) { timestamp = data["timestamp"] }
}

/// `client_backgrounding {sessionId}` (the app, bare), `sessionBackgrounded`/`sessionForegrounded
/// {sessionId}` (the guide): the device leaves or takes up the app.
public struct SessionPresence: Sendable, Equatable {
    public var backgrounded: Bool
    public var sessionId: String?

    public init(backgrounded: Bool, sessionId: String?) {
        self.backgrounded = backgrounded
        self.sessionId = sessionId
    }

    public init(backgrounded: Bool, _ data: CompanionFields) throws(CompanionError) {
        self.init(backgrounded: backgrounded, sessionId: try data.optionalString("sessionId"))
    }
}
