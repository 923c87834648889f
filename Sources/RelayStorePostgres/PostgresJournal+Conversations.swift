import RelayCore

/// The conversation methods of `CoreJournal`, as `StoreJournal` has them; the SQL is in
/// `PostgresConversationQueries` and `PostgresReadCursorQueries`. Every change runs in one
/// transaction with the change seq it takes and that seq's announcement.
extension PostgresJournal {
    public func resolveConversation(
        _ key: ConversationKey,
        userID: String,
        draft: ConversationDraft,
        now: Int64,
        completion: @escaping (Result<Conversation, any Error>) -> Void
    ) {
        performTransaction(
            "resolve a conversation",
            { connection, logger in
                try await PostgresConversationQueries.resolve(connection, logger, key: key, userID: userID, draft: draft, at: now)
            },
            completion: completion
        )
    }

    public func findConversation(_ key: ConversationKey, userID: String, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        perform(
            "find a conversation",
            { connection, logger in try await PostgresConversationQueries.find(connection, logger, key: key, userID: userID) },
            completion: completion
        )
    }

    public func conversation(id: String, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        perform(
            "read a conversation",
            { connection, logger in try await PostgresConversationQueries.fetch(connection, logger, id: id) },
            completion: completion
        )
    }

    public func conversations(userID: String, limit: Int, completion: @escaping (Result<[Conversation], any Error>) -> Void) {
        perform(
            "list conversations",
            { connection, logger in try await PostgresConversationQueries.list(connection, logger, userID: userID, limit: limit) },
            completion: completion
        )
    }

    public func edit(conversationID: String, _ edit: ConversationEdit, now: Int64, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        performTransaction(
            "edit a conversation",
            { connection, logger in
                try await PostgresConversationQueries.update(connection, logger, id: conversationID) { edit.apply(to: &$0, at: now) }
            },
            completion: completion
        )
    }

    public func deleteConversation(id: String, completion: @escaping (Result<Bool, any Error>) -> Void) {
        performTransaction(
            "delete a conversation",
            { connection, logger in try await PostgresConversationQueries.delete(connection, logger, id: id) },
            completion: completion
        )
    }

    public func resetConversation(
        id: String,
        freshID: String,
        now: Int64,
        completion: @escaping (Result<ConversationReset?, any Error>) -> Void
    ) {
        performTransaction(
            "reset a conversation",
            { connection, logger in try await PostgresConversationQueries.reset(connection, logger, id: id, freshID: freshID, at: now) },
            completion: completion
        )
    }

    public func detachConversation(id: String, scheme: String, now: Int64, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        performTransaction(
            "detach a conversation",
            { connection, logger in try await PostgresConversationQueries.detach(connection, logger, id: id, scheme: scheme, at: now) },
            completion: completion
        )
    }

    public func addKey(_ key: ConversationKey, to conversation: Conversation, completion: @escaping (Result<Void, any Error>) -> Void) {
        let (id, userID) = (conversation.id, conversation.userID)
        perform(
            "add a conversation key",
            { connection, logger in try await PostgresConversationQueries.addKey(connection, logger, key, conversationID: id, userID: userID) },
            completion: completion
        )
    }

    public func saveBackendSession(_ session: String?, conversationID: String) {
        background("store a backend session") { connection, logger in
            try await PostgresConversationQueries.setBackendSession(connection, logger, session, conversationID: conversationID)
        }
    }

    public func markRead(
        userID: String,
        conversationID: String,
        seq: Int64,
        now: Int64,
        completion: @escaping (Result<ReadCursor?, any Error>) -> Void
    ) {
        perform(
            "mark a conversation read",
            { connection, logger in
                try await PostgresReadCursorQueries.markRead(connection, logger, userID: userID, conversationID: conversationID, seq: seq, at: now)
            },
            completion: completion
        )
    }
}
