/// A conversation's run reports added up.
public struct UsageTotals: Sendable, Equatable {
    public var runs: Int
    public var costUSD: Double?
    public var inputTokens: Int
    public var outputTokens: Int
    public var permissionDenials: Int

    public init(runs: Int, costUSD: Double?, inputTokens: Int, outputTokens: Int, permissionDenials: Int) {
        self.runs = runs
        self.costUSD = costUSD
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.permissionDenials = permissionDenials
    }
}

/// An approval as `clawrelay approvals` lists it.
public struct ApprovalRow: Sendable, Equatable {
    public var id: String
    public var shortID: String
    public var userID: String
    public var conversationID: String
    public var backend: String
    public var toolName: String
    public var summary: String
    public var createdAt: Int64
    public var expiresAt: Int64
    public var decision: String?
    public var cause: String?
    public var decidedBy: String?
    public var decidedFrom: String?
    public var deviceID: String?
    public var resolvedAt: Int64?

    public init(
        id: String,
        shortID: String,
        userID: String,
        conversationID: String,
        backend: String,
        toolName: String,
        summary: String,
        createdAt: Int64,
        expiresAt: Int64,
        decision: String?,
        cause: String?,
        decidedBy: String?,
        decidedFrom: String?,
        deviceID: String?,
        resolvedAt: Int64?
    ) {
        self.id = id
        self.shortID = shortID
        self.userID = userID
        self.conversationID = conversationID
        self.backend = backend
        self.toolName = toolName
        self.summary = summary
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.decision = decision
        self.cause = cause
        self.decidedBy = decidedBy
        self.decidedFrom = decidedFrom
        self.deviceID = deviceID
        self.resolvedAt = resolvedAt
    }
}

/// What `clawrelay conversations show` prints: the conversation, its last events, its usage.
public struct ConversationDetail: Sendable {
    public var conversation: Conversation
    public var events: [ChatEvent]
    public var usage: UsageTotals

    public init(conversation: Conversation, events: [ChatEvent], usage: UsageTotals) {
        self.conversation = conversation
        self.events = events
        self.usage = usage
    }
}

/// A push target as `clawrelay devices list` shows it.
public struct PushTargetListing: Sendable, Equatable {
    /// The target with its token redacted (`apns:…9f3a`).
    public var target: String
    public var retiredAt: Int64?
    public var reason: String?

    public init(target: String, retiredAt: Int64?, reason: String?) {
        self.target = target
        self.retiredAt = retiredAt
        self.reason = reason
    }
}

/// A stored push attempt, with its row id and the user it was recorded for.
public struct PushAttemptRow: Sendable, Equatable {
    public var id: Int64
    public var userID: String?
    public var attempt: PushAttempt

    public init(id: Int64, userID: String?, attempt: PushAttempt) {
        self.id = id
        self.userID = userID
        self.attempt = attempt
    }
}

/// A device's presence in a cluster as `clawrelay devices list` shows it: its most present state
/// over the live nodes (foreground > background > offline) and its state on each live node that
/// holds it (offline ones hold no row).
public struct ClusterPresence: Sendable, Equatable {
    public var state: DevicePresence.State
    /// Node id → the device's state there, foreground or background.
    public var nodes: [String: DevicePresence.State]

    public init(nodes: [String: DevicePresence.State]) {
        self.nodes = nodes
        state = .mostPresent(nodes.values)
    }
}
