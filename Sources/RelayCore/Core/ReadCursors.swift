/// How far a user has read one conversation: every event at or before `seq` counts as read on
/// every device of that user, whatever protocol it speaks.
public struct ReadCursor: Sendable, Equatable, Codable {
    public var userID: String
    public var conversationID: String
    /// The user clock's seq of the newest event read (0: nothing read).
    public var seq: Int64
    public var updatedAt: Int64

    public init(userID: String, conversationID: String, seq: Int64, updatedAt: Int64) {
        self.userID = userID
        self.conversationID = conversationID
        self.seq = seq
        self.updatedAt = updatedAt
    }
}

/// What changed about a user's conversations besides the chat events the bus carries, for
/// clients that keep a list of conversations with unread counts.
public enum ConversationChange: Sendable, Equatable {
    /// Created (by any protocol).
    case created(Conversation)
    /// Renamed, archived or bound to another backend.
    case conversation(Conversation)
    /// The user's read cursor moved forward.
    case read(ReadCursor)
    /// Started afresh: its keys name a new conversation (`conversationID`), the old one is archived.
    case reset(ConversationReset, ResetReason)
    /// Deleted with its history.
    case deleted(Conversation)
    /// Its backend compacted its context (`done`), or had none to compact.
    case compacted(conversationID: String, userID: String, done: Bool)

    public var userID: String {
        switch self {
        case .created(let conversation), .conversation(let conversation), .deleted(let conversation): conversation.userID
        case .read(let cursor): cursor.userID
        case .reset(let reset, _): reset.fresh.userID
        case .compacted(_, let userID, _): userID
        }
    }

    public var conversationID: String {
        switch self {
        case .created(let conversation), .conversation(let conversation), .deleted(let conversation): conversation.id
        case .read(let cursor): cursor.conversationID
        case .reset(let reset, _): reset.fresh.id
        case .compacted(let id, _, _): id
        }
    }
}

/// Whoever wants to hear `ConversationChange`s (a bridge that shows a list of conversations).
///
/// - Important: loop thread only; observers run on the loop, in registration order.
public final class ConversationChanges {
    private var observers: [(ConversationChange) -> Void] = []

    init() {}

    /// Adds an observer; it stays for the hub's lifetime (capture the bridge weakly).
    public func observe(_ observer: @escaping (ConversationChange) -> Void) { observers.append(observer) }

    func publish(_ change: ConversationChange) {
        for observer in observers { observer(change) }
    }
}

/// Read cursors, one per user and conversation, durable and moved only forward.
///
/// A read anywhere (a history fetched, a queue drained, an explicit mark) moves the cursor;
/// so does a message the user sends (the journal moves it when it stores the message: one's own
/// message is never unread). The cursor also cancels pushes it covers (`RelayHub.read`).
///
/// - Important: loop thread only.
public final class ReadCursors {
    private let journal: CoreJournal
    private let clock: any Clock
    private let changes: ConversationChanges

    init(journal: CoreJournal, clock: any Clock, changes: ConversationChanges) {
        self.journal = journal
        self.clock = clock
        self.changes = changes
    }

    /// Moves the user's cursor in the conversation to `seq` (clamped to its newest event; never
    /// backwards). `completion` gets the cursor when it moved, nil when it did not; observers hear
    /// a cursor that moved, before `completion` runs.
    public func read(userID: String, conversationID: String, seq: Int64, completion: ((Result<ReadCursor?, any Error>) -> Void)? = nil) {
        guard seq > 0 else {
            completion?(.success(nil))
            return
        }
        journal.markRead(userID: userID, conversationID: conversationID, seq: seq, now: clock.nowMillis()) { [changes] result in
            if case .success(let cursor?) = result { changes.publish(.read(cursor)) }
            completion?(result)
        }
    }
}
