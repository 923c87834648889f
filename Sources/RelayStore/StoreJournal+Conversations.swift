import RelayCore

extension StoreJournal {
    public func resetConversation(
        id: String,
        freshID: String,
        now: Int64,
        completion: @escaping (Result<ConversationReset?, any Error>) -> Void
    ) {
        store.perform({ db in try ConversationQueries.reset(db, id: id, freshID: freshID, at: now) }, completion: completion)
    }

    public func detachConversation(id: String, scheme: String, now: Int64, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        store.perform({ db in try ConversationQueries.detach(db, id: id, scheme: scheme, at: now) }, completion: completion)
    }
}
