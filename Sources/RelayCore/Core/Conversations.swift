/// Maps protocol keys to conversations, with a cache in front of the journal.
///
/// The cache keeps the most recently used conversations up to a limit, and those pinned (a
/// conversation with a turn under way): anything else may be gone, so code that must know a
/// conversation reads it with `load` or `find`, and `cached` is only a shortcut.
///
/// - Important: loop thread only. Completions run inline when the answer is cached.
public final class Conversations {
    private struct UserKey: Hashable {
        var userID: String
        var key: ConversationKey
    }

    private let journal: CoreJournal
    private let clock: any Clock
    private let changes: ConversationChanges
    private var cache: ConversationCache
    private var waiting: [UserKey: [(Result<Conversation, any Error>) -> Void]] = [:]

    init(journal: CoreJournal, clock: any Clock, changes: ConversationChanges, cacheLimit: Int) {
        self.journal = journal
        self.clock = clock
        self.changes = changes
        cache = ConversationCache(limit: cacheLimit)
    }

    /// The conversation `key` names for `userID`, created from `draft` the first time (observers
    /// of `ConversationChanges` hear a creation).
    public func resolve(
        _ key: ConversationKey,
        userID: String,
        draft: ConversationDraft = ConversationDraft(),
        completion: @escaping (Result<Conversation, any Error>) -> Void
    ) {
        let userKey = UserKey(userID: userID, key: key)
        if let conversation = cache.conversation(key, userID: userID) { return completion(.success(conversation)) }
        if waiting[userKey] != nil {
            waiting[userKey]?.append(completion)
            return
        }
        waiting[userKey] = [completion]
        let now = clock.nowMillis()
        journal.resolveConversation(key, userID: userID, draft: draft, now: now) { [self] result in
            var created: Conversation?
            if case .success(let conversation) = result {
                // The journal stamps a conversation it creates with the time passed here; one it
                // already had was either cached or older.
                if !cache.contains(id: conversation.id), conversation.createdAt == now { created = conversation }
                cache.remember(conversation)
            }
            for waiter in waiting.removeValue(forKey: userKey) ?? [] { waiter(result) }
            if let created { changes.publish(.created(created)) }
        }
    }

    /// The conversation `key` names, or nil; nothing is created.
    public func find(_ key: ConversationKey, userID: String, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        if let cached = cached(key, userID: userID) { return completion(.success(cached)) }
        journal.findConversation(key, userID: userID) { [self] result in
            if case .success(let conversation?) = result { cache.remember(conversation) }
            completion(result)
        }
    }

    /// The cached conversation for `key`, if it is cached (nil says nothing about the journal).
    public func cached(_ key: ConversationKey, userID: String) -> Conversation? { cache.conversation(key, userID: userID) }

    /// The cached conversation with `id`, if it is cached (nil says nothing about the journal).
    public func cached(id: String) -> Conversation? { cache.conversation(id: id) }

    /// A conversation by id, from the cache or the journal.
    public func load(id: String, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        if let conversation = cache.conversation(id: id) { return completion(.success(conversation)) }
        journal.conversation(id: id) { [self] result in
            if case .success(let conversation?) = result { cache.remember(conversation) }
            completion(result)
        }
    }

    /// Makes sure the conversations with `ids` are cached (read from the journal when not), then
    /// calls `completion`: inline when they all are. A conversation that cannot be read stays out.
    public func loadAll(_ ids: Set<String>, completion: @escaping () -> Void) {
        let missing = ids.filter { !cache.contains(id: $0) }
        guard !missing.isEmpty else { return completion() }
        var left = missing.count
        for id in missing {
            load(id: id) { _ in
                left -= 1
                if left == 0 { completion() }
            }
        }
    }

    /// Keeps the conversation with `id` cached (once it is read) until `unpin(id:)`: its keys and
    /// settings stay at hand while something runs in it. Pins count.
    public func pin(id: String) { cache.pin(id: id) }

    public func unpin(id: String) { cache.unpin(id: id) }

    public func list(userID: String, limit: Int, completion: @escaping (Result<[Conversation], any Error>) -> Void) {
        journal.conversations(userID: userID, limit: limit, completion: completion)
    }

    /// Points one more key at `conversation`.
    public func addKey(_ key: ConversationKey, to conversation: Conversation, completion: @escaping (Result<Void, any Error>) -> Void) {
        var named = cache.conversation(id: conversation.id) ?? conversation
        if !named.keys.contains(key) { named.keys.append(key) }
        cache.remember(named)
        journal.addKey(key, to: conversation, completion: completion)
    }

    /// Stores `edit` (a rename, a new backend); the cache and observers of `ConversationChanges`
    /// follow. `completion` gets the edited conversation, nil when there is no such conversation.
    public func edit(id: String, _ edit: ConversationEdit, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        journal.edit(conversationID: id, edit, now: clock.nowMillis()) { [weak self] result in
            if case .success(let edited?) = result { self?.updated(edited) }
            completion(result)
        }
    }

    /// The stored conversation changed (renamed, archived, rebound): the cache follows and
    /// observers of `ConversationChanges` hear it.
    public func updated(_ conversation: Conversation) {
        cache.remember(conversation)
        changes.publish(.conversation(conversation))
    }

    /// Deletes the conversation and everything in it; `completion` gets false when there was none.
    /// Observers of `ConversationChanges` hear the deletion.
    public func delete(id: String, completion: @escaping (Result<Bool, any Error>) -> Void) {
        load(id: id) { [self] loaded in
            journal.deleteConversation(id: id) { [weak self] result in
                if case .success(true) = result {
                    self?.forget(id: id)
                    if case .success(let conversation?) = loaded { self?.changes.publish(.deleted(conversation)) }
                }
                completion(result)
            }
        }
    }

    /// Gives the conversation's keys a fresh conversation and archives it (`Turns.reset` says
    /// what else a reset does); nil when there is no such conversation. Observers hear the reset.
    public func reset(id: String, reason: ResetReason, completion: @escaping (Result<ConversationReset?, any Error>) -> Void) {
        journal.resetConversation(id: id, freshID: Conversation.newID(), now: clock.nowMillis()) { [weak self] result in
            if case .success(let reset?) = result, let self {
                cache.remove(id: id)
                cache.remember(reset.old)
                cache.remember(reset.fresh)
                changes.publish(.reset(reset, reason))
            }
            completion(result)
        }
    }

    /// Takes the gateway session keys (`session:…`) off the conversation and archives it: the
    /// session is gone from lists that follow keys, its history stays (reachable by id).
    public func detach(id: String, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        journal.detachConversation(id: id, scheme: ConversationKey.sessionScheme, now: clock.nowMillis()) { [weak self] result in
            if case .success(let detached?) = result, let self {
                cache.remove(id: id)
                cache.remember(detached)
                changes.publish(.conversation(detached))
            }
            completion(result)
        }
    }

    /// The backend compacted the conversation's context (`done`), or had none to compact.
    public func compacted(_ id: String, userID: String, done: Bool) {
        changes.publish(.compacted(conversationID: id, userID: userID, done: done))
    }

    /// The conversation was deleted: its cached entry and keys go.
    public func forget(id: String) { cache.remove(id: id) }

    /// Stores the backend's own session id for a conversation (nil forgets it), so its next turn
    /// carries on there. An id longer than `backendSessionLimit` bytes is not kept.
    public func setBackendSession(_ session: String?, of conversationID: String) {
        let kept = session.flatMap { $0.isEmpty || $0.utf8.count > Self.backendSessionLimit ? nil : $0 }
        if let cached = cache.conversation(id: conversationID), cached.backendSession == kept { return }
        cache.update(id: conversationID) { $0.backendSession = kept }
        journal.saveBackendSession(kept, conversationID: conversationID)
    }

    /// Longest backend session id kept, in UTF-8 bytes.
    public static let backendSessionLimit = 512

    /// A cached conversation's key in `scheme` (nil too when it is not cached: pin or load it first).
    public func key(of conversationID: String, scheme: String) -> String? { cache.conversation(id: conversationID)?.key(in: scheme) }
}
