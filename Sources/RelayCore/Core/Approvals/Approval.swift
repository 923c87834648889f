/// What a device may answer to an approval.
public enum ApprovalDecision: String, Sendable, Codable, CaseIterable {
    /// Run the tool this time.
    case allowOnce = "allow-once"
    /// Run it, and let the backend run the same without asking again in this conversation's session.
    case allowAlways = "allow-always"
    case deny
}

/// A backend's question: may this tool run? (Claude Code's `can_use_tool`.)
public struct ApprovalAsk: Sendable, Equatable {
    /// The backend's id for the question (its control request id).
    public var requestID: String
    /// Who asks, as people know it ("Claude Code").
    public var agent: String
    public var toolName: String
    /// One line a person reads to decide: the Bash command, the file path, …
    public var summary: String
    /// The tool's input as the backend gave it (bounded by the backend).
    public var input: JSONValue
    public var toolUseID: String?
    /// The working directory the tool runs in, when the backend knows it.
    public var directory: String?
    public var decisions: [ApprovalDecision]
    /// How long the user has to answer before it is denied.
    public var timeoutMillis: Int

    public init(
        requestID: String,
        agent: String = "The assistant",
        toolName: String,
        summary: String,
        input: JSONValue,
        toolUseID: String? = nil,
        directory: String? = nil,
        decisions: [ApprovalDecision] = ApprovalDecision.allCases,
        timeoutMillis: Int = 600_000
    ) {
        self.requestID = requestID
        self.agent = agent
        self.toolName = toolName
        self.summary = summary
        self.input = input
        self.toolUseID = toolUseID
        self.directory = directory
        self.decisions = decisions
        self.timeoutMillis = timeoutMillis
    }
}

/// What the core tells the backend once a question is decided.
public enum ApprovalAnswer: Sendable, Equatable {
    case allow(always: Bool)
    /// Denied; `message` is what the assistant is told.
    case deny(message: String)
}

/// Who decided an approval.
public struct ApprovalDecider: Sendable, Equatable, Codable {
    public var deviceID: String
    /// The device's name as people know it (its claimed name), else its id.
    public var name: String
    public var protocolName: String

    public init(deviceID: String, name: String?, protocolName: String) {
        self.deviceID = deviceID
        self.name = name?.isEmpty == false ? name! : deviceID
        self.protocolName = protocolName
    }

    /// The relay itself (an expiry, a cancelled turn).
    public static let relay = ApprovalDecider(deviceID: "", name: "the relay", protocolName: "relay")
}

/// One question waiting for (or given) an answer, as every protocol shows it.
public struct Approval: Sendable, Equatable, Codable {
    /// The relay's id (32 hex digits).
    public var id: String
    /// The shortest prefix of `id` (at least 4 characters) that no other pending approval of the
    /// user shares, when it was asked: what notes show and `/approve` takes.
    public var shortID: String
    public var userID: String
    public var conversationID: String
    /// The run of the turn that asked (the gateway's `chat.send` idempotency key).
    public var runID: String
    public var backend: String
    /// The backend's id for the question.
    public var requestID: String
    public var agent: String
    public var toolName: String
    public var summary: String
    public var input: JSONValue
    public var toolUseID: String?
    public var directory: String?
    public var decisions: [ApprovalDecision]
    public var createdAt: Int64
    public var expiresAt: Int64

    public init(
        id: String,
        shortID: String,
        userID: String,
        conversationID: String,
        runID: String,
        backend: String,
        ask: ApprovalAsk,
        createdAt: Int64,
        expiresAt: Int64
    ) {
        self.id = id
        self.shortID = shortID
        self.userID = userID
        self.conversationID = conversationID
        self.runID = runID
        self.backend = backend
        requestID = ask.requestID
        agent = ask.agent
        toolName = ask.toolName
        summary = ask.summary
        input = ask.input
        toolUseID = ask.toolUseID
        directory = ask.directory
        decisions = ask.decisions
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// How an approval ended.
public struct ApprovalResolution: Sendable, Equatable, Codable {
    public enum Cause: String, Sendable, Codable {
        /// A device answered.
        case decided
        /// Nobody answered in time: denied.
        case expired
        /// Its turn ended first (aborted, failed) or the backend withdrew the question.
        case cancelled
    }

    public var decision: ApprovalDecision
    public var cause: Cause
    public var by: ApprovalDecider
    public var at: Int64

    public init(decision: ApprovalDecision, cause: Cause, by: ApprovalDecider, at: Int64) {
        self.decision = decision
        self.cause = cause
        self.by = by
        self.at = at
    }
}

extension ApprovalResolution {
    /// "allowed once by Ann's iPhone from clawline", "denied: nobody answered in time", …
    public var summary: String {
        switch (cause, decision) {
        case (.decided, .allowOnce): "allowed once by \(by.name) from \(by.protocolName)"
        case (.decided, .allowAlways): "always allowed (for this session) by \(by.name) from \(by.protocolName)"
        case (.decided, .deny): "denied by \(by.name) from \(by.protocolName)"
        case (.expired, _): "denied: nobody answered in time"
        case (.cancelled, _): "cancelled: the run no longer waits for it"
        }
    }
}

/// What bridges, pushes and notes hear about approvals.
public enum ApprovalUpdate: Sendable, Equatable {
    case requested(Approval)
    case resolved(Approval, ApprovalResolution)

    public var approval: Approval {
        switch self {
        case .requested(let approval), .resolved(let approval, _): approval
        }
    }
}

/// Why a decision could not be taken.
public enum ApprovalRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// No pending approval of the user has that id or prefix.
    case notFound(String)
    /// It was resolved already (the first decision wins).
    case resolved(Approval, ApprovalResolution)
    /// Several pending approvals start with that prefix.
    case ambiguous(String)
    /// A prefix shorter than 4 characters.
    case tooShort(String)
    /// The approval does not offer that decision.
    case notOffered(ApprovalDecision)

    public var description: String {
        switch self {
        case .notFound(let id): "no pending approval \(id.prefix(40))"
        case .resolved(let approval, let resolution): "approval \(approval.shortID) was already answered: \(resolution.summary)"
        case .ambiguous(let id): "\(id.prefix(40)) names more than one pending approval; give more of its id"
        case .tooShort(let id): "\(id.prefix(40)) is too short: give at least 4 characters of the approval's id"
        case .notOffered(let decision): "this approval cannot be answered \(decision.rawValue)"
        }
    }
}

/// An approval as stored for `clawrelay approvals` (pending, then resolved).
public struct ApprovalRecord: Sendable, Equatable {
    public var approval: Approval
    public var resolution: ApprovalResolution?

    public init(approval: Approval, resolution: ApprovalResolution?) {
        self.approval = approval
        self.resolution = resolution
    }
}
