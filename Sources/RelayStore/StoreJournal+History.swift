import GRDB
import RelayCore

/// The history's reads run on the store's reader, not behind the writer's commits.
extension StoreJournal: HistoryJournal {
    public func replay(audiences: [String], after cursor: String?, limit: Int, completion: @escaping (Result<ReplayWindow, any Error>) -> Void) {
        store.read({ db in try EventQueries.replay(db, audiences: audiences, after: cursor, limit: limit) }, completion: completion)
    }

    public func recentEvents(
        userID: String,
        conversationID: String,
        skipping: Int,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<RecentEvents, any Error>) -> Void
    ) {
        store.read(
            { db in
                try EventQueries.recent(db, userID: userID, conversationID: conversationID, skipping: skipping, limit: limit, byteBudget: byteBudget)
            },
            completion: completion
        )
    }

    public func event(id: String, completion: @escaping (Result<ChatEvent?, any Error>) -> Void) {
        store.read({ db in try EventQueries.event(db, id: id) }, completion: completion)
    }

    public func timelinePage(
        userID: String,
        conversationID: String,
        before seq: Int64?,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<TimelinePage, any Error>) -> Void
    ) {
        store.read(
            { db in
                let (entries, hasMore) = try TimelineQueries.page(
                    db,
                    userID: userID,
                    conversationID: conversationID,
                    before: seq,
                    limit: limit,
                    byteBudget: byteBudget
                )
                return TimelinePage(entries: entries, hasMore: hasMore)
            },
            completion: completion
        )
    }

    public func timelineSync(
        userID: String,
        after seq: Int64,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<TimelineSync, any Error>) -> Void
    ) {
        store.read(
            { db in
                let (entries, more) = try TimelineQueries.after(db, userID: userID, seq: seq, limit: limit, byteBudget: byteBudget)
                var conversations = try ConversationQueries.changed(db, userID: userID, after: seq)
                var included = Set(conversations.map(\.id))
                for id in entries.map(\.conversationID) where included.insert(id).inserted {
                    if let conversation = try ConversationQueries.fetch(db, id: id) { conversations.append(conversation) }
                }
                return TimelineSync(entries: entries, more: more, conversations: conversations)
            },
            completion: completion
        )
    }

    public func lastEvents(conversationIDs: [String], completion: @escaping (Result<[String: ChatEvent], any Error>) -> Void) {
        store.read({ db in try TimelineQueries.lastEvents(db, conversationIDs: conversationIDs) }, completion: completion)
    }

    public func eventCount(conversationID: String, completion: @escaping (Result<Int, any Error>) -> Void) {
        store.read({ db in try EventQueries.count(db, conversationID: conversationID) }, completion: completion)
    }

    public func message(deviceID: String, clientID: String, completion: @escaping (Result<StoredMessage?, any Error>) -> Void) {
        store.read(
            { db in
                guard let record = try MessageQueries.fetch(db, deviceID: deviceID, clientID: clientID), let eventID = record.userEventID,
                    let event = try EventQueries.fetch(db, id: eventID)
                else { return nil }
                return StoredMessage(record: record, event: event)
            },
            completion: completion
        )
    }

    public func mentions(assetID: String, audience: String, completion: @escaping (Result<Bool, any Error>) -> Void) {
        store.read({ db in try EventQueries.mentions(db, assetID: assetID, audience: audience) }, completion: completion)
    }

    public func summaries(userID: String, limit: Int, completion: @escaping (Result<[ConversationSummary], any Error>) -> Void) {
        store.read({ db in try ReadCursorQueries.summaries(db, userID: userID, limit: limit) }, completion: completion)
    }

    public func summary(conversationID: String, userID: String, completion: @escaping (Result<ConversationSummary?, any Error>) -> Void) {
        store.read({ db in try ReadCursorQueries.summary(db, conversationID: conversationID, userID: userID) }, completion: completion)
    }
}
