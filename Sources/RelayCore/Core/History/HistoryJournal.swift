/// A page of a conversation's timeline, oldest first.
public struct TimelinePage: Sendable, Equatable {
    public var entries: [TimelineEntry]
    /// Older entries exist before the first one.
    public var hasMore: Bool

    public init(entries: [TimelineEntry], hasMore: Bool) {
        self.entries = entries
        self.hasMore = hasMore
    }
}

/// A conversation's newest events, oldest first, after skipping the newest `skipped`.
public struct RecentEvents: Sendable, Equatable {
    public var events: [ChatEvent]
    /// Older events exist before the first one (left out by count or size).
    public var hasMore: Bool

    public init(events: [ChatEvent], hasMore: Bool) {
        self.events = events
        self.hasMore = hasMore
    }
}

/// What a user's devices missed since a seq of the user's clock: timeline entries in seq order,
/// and the conversations they belong to or that changed since.
public struct TimelineSync: Sendable, Equatable {
    public var entries: [TimelineEntry]
    /// Entries after the last one were left out (by count or size).
    public var more: Bool
    public var conversations: [Conversation]

    public init(entries: [TimelineEntry], more: Bool, conversations: [Conversation]) {
        self.entries = entries
        self.more = more
        self.conversations = conversations
    }
}

/// A client message as stored, with the user event it became.
public struct StoredMessage: Sendable, Equatable {
    public var record: MessageRecord
    public var event: ChatEvent

    public init(record: MessageRecord, event: ChatEvent) {
        self.record = record
        self.event = event
    }
}

/// Reads of the history: replays, timelines, summaries. None of them needs ordering with
/// writes still in flight, so a journal may serve them from reader connections.
///
/// - Important: called on the loop; completions run later on the loop and see every write whose
///   completion already ran.
public protocol HistoryJournal: AnyObject {
    /// Events of `audiences` after the event `cursor` (the tail of the history when it is nil or unknown).
    func replay(audiences: [String], after cursor: String?, limit: Int, completion: @escaping (Result<ReplayWindow, any Error>) -> Void)
    /// The newest `limit` events of a conversation that fit in about `byteBudget` bytes, oldest
    /// first, after skipping its newest `skipping` events.
    func recentEvents(
        userID: String,
        conversationID: String,
        skipping: Int,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<RecentEvents, any Error>) -> Void
    )
    /// The newest `limit` timeline entries of a conversation before `seq` (all when nil).
    func timelinePage(
        userID: String,
        conversationID: String,
        before seq: Int64?,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<TimelinePage, any Error>) -> Void
    )
    /// The user's timeline after `seq`, with the conversations it touches or that changed since.
    func timelineSync(userID: String, after seq: Int64, limit: Int, byteBudget: Int, completion: @escaping (Result<TimelineSync, any Error>) -> Void)
    /// The newest event of each conversation that has one.
    func lastEvents(conversationIDs: [String], completion: @escaping (Result<[String: ChatEvent], any Error>) -> Void)
    /// One stored event by its id, nil when there is none (or the history no longer keeps it).
    func event(id: String, completion: @escaping (Result<ChatEvent?, any Error>) -> Void)
    /// How many events a conversation holds.
    func eventCount(conversationID: String, completion: @escaping (Result<Int, any Error>) -> Void)
    /// The message a device sent under `clientID`, with its user event.
    func message(deviceID: String, clientID: String, completion: @escaping (Result<StoredMessage?, any Error>) -> Void)
    /// Whether an event of `audience` names the asset (so its members may download it).
    func mentions(assetID: String, audience: String, completion: @escaping (Result<Bool, any Error>) -> Void)
    /// The user's conversations as a list shows them, most recently updated first.
    func summaries(userID: String, limit: Int, completion: @escaping (Result<[ConversationSummary], any Error>) -> Void)
    /// One conversation as a list shows it to `userID`, nil when there is none.
    func summary(conversationID: String, userID: String, completion: @escaping (Result<ConversationSummary?, any Error>) -> Void)
}
