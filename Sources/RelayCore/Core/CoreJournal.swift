/// A user message on its way into a conversation.
public struct UserMessage: Sendable {
    public var conversationID: String
    /// The conversation's owner: the user, or the shared audience of a shared conversation.
    public var userID: String
    /// The user whose device sent it (differs from `userID` in a shared conversation): the
    /// attached assets must be theirs.
    public var senderID: String
    public var deviceID: String
    /// The client's id for the message, unique per device: retries with it are idempotent.
    public var clientID: String
    /// The id clients use for the turn it starts (the gateway's idempotency key); nil = a new one.
    public var runID: String?
    public var content: String
    /// Attachments in the relay's neutral JSON form, or nil.
    public var attachmentsJSON: String?
    /// Compared with a stored message of the same client id: equal means a retry.
    public var attachmentsHash: String
    /// Asset ids that must exist and belong to the user.
    public var assetIDs: [String]
    /// The protocol's verdict on the message, applied after the duplicate check (a retry that
    /// matches its stored message is accepted as it is).
    public var rejection: (any Error & Sendable)?
    /// When its frame arrived at the bridge (`MonotonicClock`), for the stage histograms; 0 when
    /// the bridge does not stamp it.
    public var receivedAt: UInt64 = 0
    /// Answer it without changing anything (the Companion app's planning mode): see `TurnRequest.readOnly`.
    public var readOnly = false
    /// In a cluster: the node that accepted it, which registers its turn in the `TurnLedger` in
    /// the same write; nil on a single node and for relay commands answered at once.
    public var acceptingNode: NodeIncarnation?
    /// In a cluster: the backend the protocol chose for the turn (`TurnPolicy.backend`), kept with
    /// the turn so a node that takes it over (its node died, or it holds the turn's account) runs
    /// it where the accepting node would have.
    public var policyBackend: String?

    public init(
        conversationID: String,
        userID: String,
        senderID: String? = nil,
        deviceID: String,
        clientID: String,
        runID: String? = nil,
        content: String,
        attachmentsJSON: String? = nil,
        attachmentsHash: String = "",
        assetIDs: [String] = [],
        rejection: (any Error & Sendable)? = nil
    ) {
        self.conversationID = conversationID
        self.userID = userID
        self.senderID = senderID ?? userID
        self.deviceID = deviceID
        self.clientID = clientID
        self.runID = runID
        self.content = content
        self.attachmentsJSON = attachmentsJSON
        self.attachmentsHash = attachmentsHash
        self.assetIDs = assetIDs
        self.rejection = rejection
    }

    public var contentHash: String { Digest.sha256Hex(content.utf8) }
}

/// Where a stored message's turn is.
public enum MessageState: Int, Sendable, Codable {
    case finalized = 0
    case active = 1
    case failed = 2
    case aborted = 3
}

/// Where a turn's answer will land: its event id and the seq its placeholder holds while the
/// turn runs (clients that list unfinished answers show them there; the final gets a fresh seq).
public struct AnswerSlot: Sendable, Equatable {
    public var id: String
    public var seq: Int64

    public init(id: String, seq: Int64) {
        self.id = id
        self.seq = seq
    }
}

/// What the journal found when a message arrived.
public enum Acceptance: Sendable {
    /// New: its user event is stored (and queued for the given devices), with its answer's slot.
    case fresh(ChatEvent, runID: String, answer: AnswerSlot)
    /// The same client id with the same content was stored before (with its answer's slot, when
    /// it was given one).
    case duplicate(MessageState, runID: String, answer: AnswerSlot?)
    /// The same client id with other content.
    case mismatch
    case rejected(any Error & Sendable)
    case missingAsset(String)
}

/// A device that is not in the foreground and keeps a notification queue.
public struct QueueTarget: Sendable, Equatable, Hashable {
    public var deviceID: String
    public var ttlMillis: Int64
    /// Most entries kept; the oldest go first.
    public var capacity: Int

    public init(deviceID: String, ttlMillis: Int64, capacity: Int) {
        self.deviceID = deviceID
        self.ttlMillis = ttlMillis
        self.capacity = capacity
    }
}

/// What a notification queue holds: a durable bus event.
public enum QueueItem: Sendable, Equatable, Codable {
    case message(ChatEvent)
    case failure(TurnFailure)

    public init?(_ event: BusEvent) {
        switch event {
        case .message(let event): self = .message(event)
        case .turnFailed(let failure): self = .failure(failure)
        case .streaming, .assistantTyping, .tool, .status, .approval: return nil
        }
    }

    public var busEvent: BusEvent {
        switch self {
        case .message(let event): .message(event)
        case .failure(let failure): .turnFailed(failure)
        }
    }

    public var timestampMillis: Int64 {
        switch self {
        case .message(let event): event.timestampMillis
        case .failure(let failure): failure.timestampMillis
        }
    }

    public var conversationID: String {
        switch self {
        case .message(let event): event.conversationID
        case .failure(let failure): failure.conversationID
        }
    }
}

/// One entry of a device's queue, in queue order.
public struct QueuedEvent: Sendable, Equatable {
    public var id: Int64
    public var item: QueueItem
    public var queuedAt: Int64

    public init(id: Int64, item: QueueItem, queuedAt: Int64) {
        self.id = id
        self.item = item
        self.queuedAt = queuedAt
    }
}

/// The durable side of the core: RelayStore over SQLite in the relay, memory in tests.
///
/// - Important: called on the loop; every completion runs later on the loop, after the work is
///   durable, and completions run in submission order.
public protocol CoreJournal: AnyObject {
    /// The conversation `key` names for `userID`, created from `draft` the first time.
    func resolveConversation(
        _ key: ConversationKey,
        userID: String,
        draft: ConversationDraft,
        now: Int64,
        completion: @escaping (Result<Conversation, any Error>) -> Void
    )
    /// The conversation `key` names for `userID`, nil when there is none (nothing is created).
    func findConversation(_ key: ConversationKey, userID: String, completion: @escaping (Result<Conversation?, any Error>) -> Void)
    /// A conversation by id, nil when there is none.
    func conversation(id: String, completion: @escaping (Result<Conversation?, any Error>) -> Void)
    /// The conversations of a user, most recently updated first.
    func conversations(userID: String, limit: Int, completion: @escaping (Result<[Conversation], any Error>) -> Void)
    /// Applies `edit` to a conversation and gives it a new change seq; nil when there is no such conversation.
    func edit(conversationID: String, _ edit: ConversationEdit, now: Int64, completion: @escaping (Result<Conversation?, any Error>) -> Void)
    /// Deletes a conversation and everything in it (history, message records, keys, queued events,
    /// pending pushes, read cursors); false when there was none.
    func deleteConversation(id: String, completion: @escaping (Result<Bool, any Error>) -> Void)
    /// Resets a conversation at `now`: a new one (`ConversationReset.fresh`, with id `freshID`)
    /// takes its keys, and it is archived (`ConversationReset.archived`), each with a new change
    /// seq; nil when there is no such conversation.
    func resetConversation(id: String, freshID: String, now: Int64, completion: @escaping (Result<ConversationReset?, any Error>) -> Void)
    /// Takes a conversation's keys of `scheme` off it and archives it, with a new change seq; nil
    /// when there is no such conversation.
    func detachConversation(id: String, scheme: String, now: Int64, completion: @escaping (Result<Conversation?, any Error>) -> Void)
    /// Points one more key at a conversation (a Companion session id adopted for a directory).
    func addKey(_ key: ConversationKey, to conversation: Conversation, completion: @escaping (Result<Void, any Error>) -> Void)
    /// Stores the backend's own session id for a conversation (nil forgets it); nobody waits for it.
    func saveBackendSession(_ session: String?, conversationID: String)

    /// Stores the message and its user event unless its client id was seen before; queues the
    /// event for `queue` and moves the sender's read cursor to it (one's own message is never
    /// unread) in the same transaction.
    func accept(_ message: UserMessage, now: Int64, queue: [QueueTarget], completion: @escaping (Result<Acceptance, any Error>) -> Void)
    /// Stores the answer as event `eventID` and finalizes the message, queueing it for `queue`.
    func finish(
        _ turn: TurnRef,
        userID: String,
        conversationID: String,
        eventID: String,
        content: String,
        now: Int64,
        queue: [QueueTarget],
        completion: @escaping (Result<ChatEvent, any Error>) -> Void
    )
    /// Stores the relay's note in a conversation (`ChatEvent.isNote`: an assistant event no turn
    /// owns) and queues it for `queue`.
    func note(
        userID: String,
        conversationID: String,
        content: String,
        now: Int64,
        queue: [QueueTarget],
        completion: @escaping (Result<ChatEvent, any Error>) -> Void
    )
    /// Records how a turn ended without an answer and queues the failure for `queue`; `completion`
    /// gets the seq the failure took on the user's clock.
    func fail(_ failure: TurnFailure, queue: [QueueTarget], completion: @escaping (Result<Int64, any Error>) -> Void)
    /// Queues an event that was already stored, for devices that left the foreground meanwhile.
    func enqueue(_ item: QueueItem, now: Int64, queue: [QueueTarget])

    /// A device's unexpired queue in stream order (whenever each entry was queued: in a cluster a
    /// node queues another node's event when it reads it), only the events of `conversations`
    /// when given.
    func queued(deviceID: String, conversations: Set<String>?, now: Int64, completion: @escaping (Result<[QueuedEvent], any Error>) -> Void)
    /// Deletes delivered entries of a device; `completion` runs once that is durable (or failed).
    func dequeue(deviceID: String, ids: [Int64], completion: @escaping () -> Void)
    /// Deletes expired entries everywhere.
    func purgeQueues(now: Int64)

    /// Records a device's presence for `clawrelay devices list`.
    func recordPresence(deviceID: String, state: DevicePresence.State, now: Int64)

    /// Moves the user's read cursor in the conversation forward to `seq`, clamped to the
    /// conversation's newest event; the cursor when it moved, nil when it was there already (or
    /// the conversation has no event).
    func markRead(userID: String, conversationID: String, seq: Int64, now: Int64, completion: @escaping (Result<ReadCursor?, any Error>) -> Void)

    /// Runs `completion` once every write submitted before it has reported (completions run in
    /// submission order): what those writes' completions publish is out when it runs.
    func barrier(_ completion: @escaping () -> Void)

    /// While a completion runs: when the writer took the batch it belongs to and when that batch
    /// committed (for the stage histograms); nil otherwise, or when the journal does not time.
    var batchTiming: JournalBatchTiming? { get }
}

extension CoreJournal {
    public var batchTiming: JournalBatchTiming? { nil }
}
