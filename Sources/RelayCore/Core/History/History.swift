/// The core's reads of the history (replays, timelines, conversation summaries), for bridges.
///
/// - Important: loop thread only.
public final class History {
    private let journal: HistoryJournal

    init(journal: HistoryJournal) { self.journal = journal }

    /// What a reconnecting device missed: the events of its audiences after `cursor`.
    public func replay(audiences: [String], after cursor: String?, limit: Int, completion: @escaping (Result<ReplayWindow, any Error>) -> Void) {
        journal.replay(audiences: audiences, after: cursor, limit: limit, completion: completion)
    }

    /// The newest events of a conversation (at most `limit`, about `byteBudget` bytes), oldest
    /// first, after skipping its newest `skipping` (a page further back).
    public func recent(
        userID: String,
        conversationID: String,
        skipping: Int = 0,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<RecentEvents, any Error>) -> Void
    ) {
        journal.recentEvents(
            userID: userID,
            conversationID: conversationID,
            skipping: max(0, skipping),
            limit: limit,
            byteBudget: byteBudget,
            completion: completion
        )
    }

    public func page(
        userID: String,
        conversationID: String,
        before seq: Int64?,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<TimelinePage, any Error>) -> Void
    ) {
        journal.timelinePage(
            userID: userID,
            conversationID: conversationID,
            before: seq,
            limit: limit,
            byteBudget: byteBudget,
            completion: completion
        )
    }

    public func sync(userID: String, after seq: Int64, limit: Int, byteBudget: Int, completion: @escaping (Result<TimelineSync, any Error>) -> Void) {
        journal.timelineSync(userID: userID, after: seq, limit: limit, byteBudget: byteBudget, completion: completion)
    }

    public func lastEvents(of conversationIDs: [String], completion: @escaping (Result<[String: ChatEvent], any Error>) -> Void) {
        journal.lastEvents(conversationIDs: conversationIDs, completion: completion)
    }

    public func event(id: String, completion: @escaping (Result<ChatEvent?, any Error>) -> Void) {
        journal.event(id: id, completion: completion)
    }

    public func eventCount(of conversationID: String, completion: @escaping (Result<Int, any Error>) -> Void) {
        journal.eventCount(conversationID: conversationID, completion: completion)
    }

    public func message(deviceID: String, clientID: String, completion: @escaping (Result<StoredMessage?, any Error>) -> Void) {
        journal.message(deviceID: deviceID, clientID: clientID, completion: completion)
    }

    public func mentions(assetID: String, audience: String, completion: @escaping (Result<Bool, any Error>) -> Void) {
        journal.mentions(assetID: assetID, audience: audience, completion: completion)
    }

    public func summaries(userID: String, limit: Int, completion: @escaping (Result<[ConversationSummary], any Error>) -> Void) {
        journal.summaries(userID: userID, limit: limit, completion: completion)
    }

    public func summary(of conversationID: String, for userID: String, completion: @escaping (Result<ConversationSummary?, any Error>) -> Void) {
        journal.summary(conversationID: conversationID, userID: userID, completion: completion)
    }
}
