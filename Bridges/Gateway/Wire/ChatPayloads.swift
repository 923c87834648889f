import RelayKit

/// A chat message as `chat.history` and `chat` events carry it: `content` is a list of blocks
/// (a bare string is read as one text block). `id` and `seq` are the relay's additions (the
/// message's place on the user's clock, what `sessions.markRead` takes); a delta has no `seq`.
/// `note: true` (also the relay's) marks the relay's own note in the history (an approval asked or
/// answered): an assistant message no run wrote.
public struct ChatMessage: Codable, Equatable, Sendable {
    public struct Block: Codable, Equatable, Sendable {
        public var type: String?
        public var text: String?

        public init(text: String) {
            type = "text"
            self.text = text
        }
    }

    public var role: String?
    public var content: [Block]
    public var timestamp: Int64?
    public var id: String?
    public var seq: Int64?
    /// Written only as `true`.
    public var note: Bool?
    /// A user message's run (the `idempotencyKey` its `chat.send` gave), when known: how a
    /// client confirms a queued send it sees in a `session.message`.
    public var idempotencyKey: String?

    public init(id: String, role: String, text: String, timestamp: Int64, seq: Int64? = nil, note: Bool = false, idempotencyKey: String? = nil) {
        self.id = id
        self.role = role
        content = [Block(text: text)]
        self.timestamp = timestamp
        self.seq = seq
        self.note = note ? true : nil
        self.idempotencyKey = idempotencyKey
    }

    private enum CodingKeys: String, CodingKey {
        case role, content, timestamp, id, seq, note, idempotencyKey
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        role = try container.decodeIfPresent(String.self, forKey: .role)
        if let text = try? container.decodeIfPresent(String.self, forKey: .content) {
            content = [Block(text: text)]
        } else {
            content = try container.decodeIfPresent([Block].self, forKey: .content) ?? []
        }
        timestamp = try container.decodeIfPresent(Int64.self, forKey: .timestamp)
        id = try container.decodeIfPresent(String.self, forKey: .id)
        seq = try container.decodeIfPresent(Int64.self, forKey: .seq)
        note = try container.decodeIfPresent(Bool.self, forKey: .note)
        idempotencyKey = try container.decodeIfPresent(String.self, forKey: .idempotencyKey)
    }

    /// The text of its text blocks.
    public var text: String { content.compactMap(\.text).joined() }
}

/// The `chat` event: one run's progress. `state` is delta (the whole text so far; v4 clients
/// also read `deltaText`, or take it as the whole text when `replace`), final, aborted or error.
public struct ChatEventPayload: Codable, Equatable, Sendable {
    public var runId: String?
    public var sessionKey: String?
    public var seq: Int64?
    public var state: String?
    public var message: ChatMessage?
    public var errorMessage: String?
    public var deltaText: String?
    public var replace: Bool?

    public init(runId: String, sessionKey: String, seq: Int64, state: String, message: ChatMessage? = nil, errorMessage: String? = nil) {
        self.runId = runId
        self.sessionKey = sessionKey
        self.seq = seq
        self.state = state
        self.message = message
        self.errorMessage = errorMessage
    }
}

/// `chat.send {sessionKey, message, thinking?, deliver?, attachments?, timeoutMs?, idempotencyKey}`.
public struct ChatSendParams: Codable, Equatable, Sendable {
    public var sessionKey: String?
    public var message: String?
    public var timeoutMs: Int64?
    /// The run id: a retry with the same key is the same run.
    public var idempotencyKey: String?
    /// See `ChatAttachments`.
    public var attachments: [JSONValue]?

    public init(sessionKey: String, message: String, idempotencyKey: String) {
        self.sessionKey = sessionKey
        self.message = message
        self.idempotencyKey = idempotencyKey
    }
}

/// `chat.send`'s answer: `started`, `in_flight`, or how an earlier run with that key ended;
/// `/stop` answers `aborted` with the runs it stopped.
public struct ChatSendResult: Codable, Equatable, Sendable {
    public var runId: String
    public var status: String
    public var runIds: [String]?

    public init(runId: String, status: String, runIds: [String]? = nil) {
        self.runId = runId
        self.status = status
        self.runIds = runIds
    }
}

/// `chat.history {sessionKey, limit? (≤ 1000, default 200), offset? (the newest messages to skip:
/// a page further back, from `nextOffset`), maxChars? (≤ 500,000)}`.
public struct ChatHistoryParams: Codable, Equatable, Sendable {
    public var sessionKey: String?
    public var limit: Int64?
    public var offset: Int64?
    public var maxChars: Int64?

    public init(sessionKey: String, limit: Int64? = nil, offset: Int64? = nil) {
        self.sessionKey = sessionKey
        self.limit = limit
        self.offset = offset
    }
}

/// `chat.history`'s answer. `hasMore` says older messages exist; `nextOffset` (with `hasMore`)
/// is the `offset` that asks for them. `sessionInfo` and `inFlightRun` let a client that
/// (re)opens the session mid-run show the answer so far and adopt the run's live events.
public struct ChatHistory: Codable, Equatable, Sendable {
    public var sessionKey: String
    public var sessionId: String
    public var messages: [ChatMessage]
    public var hasMore: Bool
    public var nextOffset: Int64?
    public var sessionInfo: ChatSessionInfo
    public var inFlightRun: InFlightRun?

    public init(
        sessionKey: String,
        sessionId: String,
        messages: [ChatMessage],
        hasMore: Bool = false,
        nextOffset: Int64? = nil,
        sessionInfo: ChatSessionInfo,
        inFlightRun: InFlightRun? = nil
    ) {
        self.sessionKey = sessionKey
        self.sessionId = sessionId
        self.messages = messages
        self.hasMore = hasMore
        self.nextOffset = nextOffset
        self.sessionInfo = sessionInfo
        self.inFlightRun = inFlightRun
    }
}

/// A session's runs as `chat.history` and `session.message` show them: `activeRunIds` is the
/// complete set (the running one first, then those waiting); empty means idle.
public struct ChatSessionInfo: Codable, Equatable, Sendable {
    public var key: String
    public var hasActiveRun: Bool
    public var activeRunIds: [String]

    public init(key: String, activeRunIds: [String]) {
        self.key = key
        hasActiveRun = !activeRunIds.isEmpty
        self.activeRunIds = activeRunIds
    }
}

/// The running turn's answer so far.
public struct InFlightRun: Codable, Equatable, Sendable {
    public var runId: String
    public var text: String

    public init(runId: String, text: String) {
        self.runId = runId
        self.text = text
    }
}

/// `chat.abort {sessionKey, runId?}`: every run of the session, or that one.
public struct ChatAbortParams: Codable, Equatable, Sendable {
    public var sessionKey: String?
    public var runId: String?

    public init(sessionKey: String, runId: String? = nil) {
        self.sessionKey = sessionKey
        self.runId = runId
    }
}

public struct ChatAbortResult: Codable, Equatable, Sendable {
    public var ok = true
    public var aborted: Bool
    public var runIds: [String]

    public init(runIds: [String]) {
        aborted = !runIds.isEmpty
        self.runIds = runIds
    }
}

/// `chat.inject {sessionKey, message, label?}` (OpenClaw's `ChatInjectParamsSchema`): an
/// assistant note added to a session's transcript; `label` (≤ 100) prefixes it as `[label]`.
public struct ChatInjectParams: Codable, Equatable, Sendable {
    public var sessionKey: String?
    public var message: String?
    public var label: String?

    public init(sessionKey: String, message: String, label: String? = nil) {
        self.sessionKey = sessionKey
        self.message = message
        self.label = label
    }
}

/// `chat.inject`'s answer; the note also goes out as a `chat` final with `runId: "inject-<messageId>"`.
public struct ChatInjectResult: Codable, Equatable, Sendable {
    public var ok = true
    public var messageId: String

    public init(messageId: String) { self.messageId = messageId }
}
