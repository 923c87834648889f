import RelayCore

/// The history's reads, as `StoreJournal`'s; the SQL is in `PostgresEventQueries`,
/// `PostgresTimelineQueries` and `PostgresReadCursorQueries`.
///
/// They run on the writer's connection, in order with the writes (SQLite reads on a reader of its
/// own): simple, and every read sees the writes submitted before it. Reader connections can take
/// them over later; the protocol does not need the ordering.
extension PostgresJournal: HistoryJournal {
    public func replay(audiences: [String], after cursor: String?, limit: Int, completion: @escaping (Result<ReplayWindow, any Error>) -> Void) {
        perform(
            "read a replay",
            { connection, logger in try await PostgresEventQueries.replay(connection, logger, audiences: audiences, after: cursor, limit: limit) },
            completion: completion
        )
    }

    public func recentEvents(
        userID: String,
        conversationID: String,
        skipping: Int,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<RecentEvents, any Error>) -> Void
    ) {
        perform(
            "read recent events",
            { connection, logger in
                try await PostgresEventQueries.recent(
                    connection,
                    logger,
                    userID: userID,
                    conversationID: conversationID,
                    skipping: skipping,
                    limit: limit,
                    byteBudget: byteBudget
                )
            },
            completion: completion
        )
    }

    public func timelinePage(
        userID: String,
        conversationID: String,
        before seq: Int64?,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<TimelinePage, any Error>) -> Void
    ) {
        perform(
            "read a timeline page",
            { connection, logger in
                try await PostgresTimelineQueries.page(
                    connection,
                    logger,
                    userID: userID,
                    conversationID: conversationID,
                    before: seq,
                    limit: limit,
                    byteBudget: byteBudget
                )
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
        perform(
            "read a timeline sync",
            { connection, logger in
                let (entries, more) = try await PostgresTimelineQueries.after(
                    connection,
                    logger,
                    userID: userID,
                    seq: seq,
                    limit: limit,
                    byteBudget: byteBudget
                )
                var conversations = try await PostgresConversationQueries.changed(connection, logger, userID: userID, after: seq)
                var included = Set(conversations.map(\.id))
                for id in entries.map(\.conversationID) where included.insert(id).inserted {
                    if let conversation = try await PostgresConversationQueries.fetch(connection, logger, id: id) {
                        conversations.append(conversation)
                    }
                }
                return TimelineSync(entries: entries, more: more, conversations: conversations)
            },
            completion: completion
        )
    }

    public func lastEvents(conversationIDs: [String], completion: @escaping (Result<[String: ChatEvent], any Error>) -> Void) {
        perform(
            "read the last events",
            { connection, logger in try await PostgresEventQueries.lastEvents(connection, logger, conversationIDs: conversationIDs) },
            completion: completion
        )
    }

    public func event(id: String, completion: @escaping (Result<ChatEvent?, any Error>) -> Void) {
        perform("read an event", { connection, logger in try await PostgresEventQueries.event(connection, logger, id: id) }, completion: completion)
    }

    public func eventCount(conversationID: String, completion: @escaping (Result<Int, any Error>) -> Void) {
        perform(
            "count events",
            { connection, logger in try await PostgresEventQueries.count(connection, logger, conversationID: conversationID) },
            completion: completion
        )
    }

    public func message(deviceID: String, clientID: String, completion: @escaping (Result<StoredMessage?, any Error>) -> Void) {
        perform(
            "read a message",
            { connection, logger in try await PostgresEventQueries.message(connection, logger, deviceID: deviceID, clientID: clientID) },
            completion: completion
        )
    }

    public func mentions(assetID: String, audience: String, completion: @escaping (Result<Bool, any Error>) -> Void) {
        perform(
            "look for an asset",
            { connection, logger in try await PostgresEventQueries.mentions(connection, logger, assetID: assetID, audience: audience) },
            completion: completion
        )
    }

    public func summaries(userID: String, limit: Int, completion: @escaping (Result<[ConversationSummary], any Error>) -> Void) {
        perform(
            "list conversation summaries",
            { connection, logger in try await PostgresReadCursorQueries.summaries(connection, logger, userID: userID, limit: limit) },
            completion: completion
        )
    }

    public func summary(conversationID: String, userID: String, completion: @escaping (Result<ConversationSummary?, any Error>) -> Void) {
        perform(
            "read a conversation summary",
            { connection, logger in
                try await PostgresReadCursorQueries.summary(connection, logger, conversationID: conversationID, userID: userID)
            },
            completion: completion
        )
    }
}
