import RelayCore

extension MemoryJournal {
    public func resetConversation(
        id: String,
        freshID: String,
        now: Int64,
        completion: @escaping (Result<ConversationReset?, any Error>) -> Void
    ) {
        write(completion) {
            guard let old = conversations[id] else { return nil }
            var fresh = ConversationReset.fresh(from: old, id: freshID, at: now)
            fresh.changeSeq = nextSeq(old.userID)
            var archived = ConversationReset.archived(old, at: now)
            archived.changeSeq = nextSeq(old.userID)
            conversations[fresh.id] = fresh
            conversations[id] = archived
            keys = keys.mapValues { $0 == id ? fresh.id : $0 }
            return ConversationReset(old: archived, fresh: fresh)
        }
    }

    public func detachConversation(id: String, scheme: String, now: Int64, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        write(completion) {
            guard var conversation = conversations[id] else { return nil }
            let dropped = Set(conversation.keys.filter { $0.scheme == scheme }.map { "\(conversation.userID)|\($0.scheme)|\($0.value)" })
            keys = keys.filter { !dropped.contains($0.key) }
            conversation.keys.removeAll { $0.scheme == scheme }
            ConversationEdit.archive(true).apply(to: &conversation, at: now)
            conversation.changeSeq = nextSeq(conversation.userID)
            conversations[id] = conversation
            return conversation
        }
    }
}
