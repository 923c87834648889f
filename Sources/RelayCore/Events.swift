/// Who wrote a chat event.
public enum ChatRole: String, Sendable, Codable {
    case user
    case assistant
}

/// The turn an event belongs to: its run id and the message (device, client id) that started it.
public struct TurnRef: Sendable, Equatable, Hashable, Codable {
    public var runID: String
    public var deviceID: String
    public var clientID: String

    public init(runID: String, deviceID: String, clientID: String) {
        self.runID = runID
        self.deviceID = deviceID
        self.clientID = clientID
    }
}

/// A finalized, persisted event in a user's history, in per-user `seq` order.
public struct ChatEvent: Sendable, Equatable, Codable {
    public var id: String
    public var seq: Int64
    public var userID: String
    public var conversationID: String
    public var role: ChatRole
    public var content: String
    public var timestampMillis: Int64
    /// The device that sent it (user messages only).
    public var deviceID: String?
    /// Attachments as a JSON array in the relay's neutral form, or nil.
    public var attachmentsJSON: String?
    /// The turn a live event belongs to (the user message that started it, or its answer);
    /// nil when the event was read back from history.
    public var turn: TurnRef?
    /// The relay's own note in the conversation (an approval asked or answered): an assistant
    /// message no turn owns and no backend sees, never a run's answer.
    public var isNote: Bool

    public init(
        id: String,
        seq: Int64,
        userID: String,
        conversationID: String,
        role: ChatRole,
        content: String,
        timestampMillis: Int64,
        deviceID: String?,
        attachmentsJSON: String?,
        turn: TurnRef? = nil,
        isNote: Bool = false
    ) {
        self.id = id
        self.seq = seq
        self.userID = userID
        self.conversationID = conversationID
        self.role = role
        self.content = content
        self.timestampMillis = timestampMillis
        self.deviceID = deviceID
        self.attachmentsJSON = attachmentsJSON
        self.turn = turn
        self.isNote = isNote
    }
}

extension ChatEvent {
    private enum CodingKeys: String, CodingKey {
        case id, seq, userID, conversationID, role, content, timestampMillis, deviceID, attachmentsJSON, turn, isNote
    }

    /// Queue entries stored before notes existed have no `isNote`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            seq: try container.decode(Int64.self, forKey: .seq),
            userID: try container.decode(String.self, forKey: .userID),
            conversationID: try container.decode(String.self, forKey: .conversationID),
            role: try container.decode(ChatRole.self, forKey: .role),
            content: try container.decode(String.self, forKey: .content),
            timestampMillis: try container.decode(Int64.self, forKey: .timestampMillis),
            deviceID: try container.decodeIfPresent(String.self, forKey: .deviceID),
            attachmentsJSON: try container.decodeIfPresent(String.self, forKey: .attachmentsJSON),
            turn: try container.decodeIfPresent(TurnRef.self, forKey: .turn),
            isNote: try container.decodeIfPresent(Bool.self, forKey: .isNote) ?? false
        )
    }
}

/// The assistant text so far of a turn that is not final yet.
public struct TurnProgress: Sendable, Equatable {
    public var turn: TurnRef
    /// The server id the final answer will have.
    public var eventID: String
    public var conversationID: String
    /// The whole answer so far (not a fragment).
    public var content: String
    public var startedAt: Int64
    /// The seq of the answer's placeholder (`AnswerSlot.seq`).
    public var seq: Int64

    public init(turn: TurnRef, eventID: String, conversationID: String, content: String, startedAt: Int64, seq: Int64 = 0) {
        self.turn = turn
        self.eventID = eventID
        self.conversationID = conversationID
        self.content = content
        self.startedAt = startedAt
        self.seq = seq
    }
}

/// A turn that ended without an answer.
public struct TurnFailure: Sendable, Equatable, Codable {
    public enum Cause: String, Sendable, Codable {
        /// The backend failed, timed out or could not be reached.
        case failed
        /// Someone aborted it (a client, an operator).
        case aborted
        /// Its device went away and its protocol cancels on disconnect.
        case abandoned
    }

    public var turn: TurnRef
    public var conversationID: String
    public var userID: String
    public var cause: Cause
    /// For logs and for the device that asked; never a secret.
    public var reason: String
    public var timestampMillis: Int64
    /// The id the answer would have had (clients that showed a placeholder mark it failed).
    public var answerID: String?

    public init(
        turn: TurnRef,
        conversationID: String,
        userID: String,
        cause: Cause,
        reason: String,
        timestampMillis: Int64,
        answerID: String? = nil
    ) {
        self.answerID = answerID
        self.turn = turn
        self.conversationID = conversationID
        self.userID = userID
        self.cause = cause
        self.reason = reason
        self.timestampMillis = timestampMillis
    }

    /// Longest reason a device is told (a backend's stderr can be long; the log has it whole).
    public static let shownReasonLimit = 1000

    /// What every protocol with a field for it tells the device: that the answer failed and why.
    public var shown: String {
        "the assistant failed to answer: " + String(reason.prefix(Self.shownReasonLimit))
    }
}

/// Everything the bus fans out to the devices of a user.
public enum BusEvent: Sendable, Equatable {
    /// A persisted event (user echo or assistant final).
    case message(ChatEvent)
    /// The full assistant text so far of a running turn.
    case streaming(TurnProgress)
    /// The assistant typing indicator for a conversation.
    case assistantTyping(conversationID: String, active: Bool)
    /// A turn ended without an answer (persisted on its message record).
    case turnFailed(TurnFailure)
    /// A running turn's backend started or finished a tool.
    case tool(ToolProgress)
    /// A line about a running turn that is not its answer ("API overloaded, retrying 2/10").
    case status(TurnStatus)
    /// A backend asks the user whether a tool may run, or the question was resolved.
    case approval(ApprovalUpdate)

    /// Durable events are queued for devices that are not in the foreground; the rest is live only.
    public var isDurable: Bool {
        switch self {
        case .message, .turnFailed: true
        case .streaming, .assistantTyping, .tool, .status, .approval: false
        }
    }

    public var conversationID: String {
        switch self {
        case .message(let event): event.conversationID
        case .streaming(let progress): progress.conversationID
        case .assistantTyping(let conversationID, _): conversationID
        case .turnFailed(let failure): failure.conversationID
        case .tool(let tool): tool.conversationID
        case .status(let status): status.conversationID
        case .approval(let update): update.approval.conversationID
        }
    }
}

/// A line about a running turn that is not its answer, shown while it runs.
public struct TurnStatus: Sendable, Equatable {
    public var turn: TurnRef
    /// The server id the final answer will have.
    public var eventID: String
    public var conversationID: String
    public var text: String

    public init(turn: TurnRef, eventID: String, conversationID: String, text: String) {
        self.turn = turn
        self.eventID = eventID
        self.conversationID = conversationID
        self.text = text
    }
}
