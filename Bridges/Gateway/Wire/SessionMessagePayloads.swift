/// `sessions.messages.subscribe` / `unsubscribe {key, agentId?, includeApprovals?}`: the socket
/// takes (or stops taking) the session's `session.message` events. (`includeApprovals` is read
/// and ignored: the relay's approvals reach operators as `exec.approval.*` events.)
public struct SessionMessagesParams: Codable, Equatable, Sendable {
    public var key: String?
    public var sessionKey: String?
    public var agentId: String?
    public var includeApprovals: Bool?

    public init(key: String) { self.key = key }
}

public struct SessionMessagesSubscription: Codable, Equatable, Sendable {
    public var subscribed: Bool
    public var key: String

    public init(subscribed: Bool, key: String) {
        self.subscribed = subscribed
        self.key = key
    }
}

/// `session.message`: a message stored in a session the socket subscribed to, whichever device
/// and protocol wrote it, with the session's runs after it.
public struct SessionMessageEvent: Codable, Equatable, Sendable {
    public var sessionKey: String
    public var message: ChatMessage
    public var messageId: String
    public var hasActiveRun: Bool
    public var activeRunIds: [String]

    public init(sessionKey: String, message: ChatMessage, messageId: String, activeRunIds: [String]) {
        self.sessionKey = sessionKey
        self.message = message
        self.messageId = messageId
        hasActiveRun = !activeRunIds.isEmpty
        self.activeRunIds = activeRunIds
    }
}
