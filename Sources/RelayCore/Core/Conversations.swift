/// Maps protocol keys to conversations, with a cache in front of the journal.
///
/// - Important: loop thread only. Completions run inline when the answer is cached.
public final class Conversations {
    private struct UserKey: Hashable {
        var userID: String
        var key: ConversationKey
    }

    /// Cached entries kept at most; past it the cache starts over (the journal has them all).
    static let cacheLimit = 20_000

    private let journal: CoreJournal
    private let clock: any Clock
    private let changes: ConversationChanges
    private var byID: [String: Conversation] = [:]
    private var byKey: [UserKey: String] = [:]
    private var waiting: [UserKey: [(Result<Conversation, any Error>) -> Void]] = [:]

    init(journal: CoreJournal, clock: any Clock, changes: ConversationChanges) {
        self.journal = journal
        self.clock = clock
        self.changes = changes
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
        if let id = byKey[userKey], let conversation = byID[id] { return completion(.success(conversation)) }
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
                if byID[conversation.id] == nil, conversation.createdAt == now { created = conversation }
                remember(conversation)
            }
            for waiter in waiting.removeValue(forKey: userKey) ?? [] { waiter(result) }
            if let created { changes.publish(.created(created)) }
        }
    }

    /// The conversation `key` names, or nil; nothing is created.
    public func find(_ key: ConversationKey, userID: String, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        if let cached = cached(key, userID: userID) { return completion(.success(cached)) }
        journal.findConversation(key, userID: userID) { [self] result in
            if case .success(let conversation?) = result { remember(conversation) }
            completion(result)
        }
    }

    /// The cached conversation for `key`, if it was resolved before.
    public func cached(_ key: ConversationKey, userID: String) -> Conversation? {
        byKey[UserKey(userID: userID, key: key)].flatMap { byID[$0] }
    }

    public func cached(id: String) -> Conversation? { byID[id] }

    /// A conversation by id, from the cache or the journal.
    public func load(id: String, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        if let conversation = byID[id] { return completion(.success(conversation)) }
        journal.conversation(id: id) { [self] result in
            if case .success(let conversation?) = result { remember(conversation) }
            completion(result)
        }
    }

    public func list(userID: String, limit: Int, completion: @escaping (Result<[Conversation], any Error>) -> Void) {
        journal.conversations(userID: userID, limit: limit, completion: completion)
    }

    /// Points one more key at `conversation`.
    public func addKey(_ key: ConversationKey, to conversation: Conversation, completion: @escaping (Result<Void, any Error>) -> Void) {
        var named = byID[conversation.id] ?? conversation
        if !named.keys.contains(key) { named.keys.append(key) }
        remember(named)
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
        remember(conversation)
        changes.publish(.conversation(conversation))
    }

    /// Deletes the conversation and everything in it; `completion` gets false when there was none.
    public func delete(id: String, completion: @escaping (Result<Bool, any Error>) -> Void) {
        journal.deleteConversation(id: id) { [weak self] result in
            if case .success(true) = result { self?.forget(id: id) }
            completion(result)
        }
    }

    /// The conversation was deleted: its cached entry and keys go.
    public func forget(id: String) {
        guard let conversation = byID.removeValue(forKey: id) else { return }
        for key in conversation.keys { byKey.removeValue(forKey: UserKey(userID: conversation.userID, key: key)) }
    }

    /// Stores the backend's own session id for a conversation (nil forgets it), so its next turn
    /// carries on there. An id longer than `backendSessionLimit` bytes is not kept.
    public func setBackendSession(_ session: String?, of conversationID: String) {
        let kept = session.flatMap { $0.isEmpty || $0.utf8.count > Self.backendSessionLimit ? nil : $0 }
        if let cached = byID[conversationID], cached.backendSession == kept { return }
        byID[conversationID]?.backendSession = kept
        journal.saveBackendSession(kept, conversationID: conversationID)
    }

    /// Longest backend session id kept, in UTF-8 bytes.
    public static let backendSessionLimit = 512

    /// A cached conversation's key in `scheme`.
    public func key(of conversationID: String, scheme: String) -> String? { byID[conversationID]?.key(in: scheme) }

    private func remember(_ conversation: Conversation) {
        if byID.count >= Self.cacheLimit {
            byID.removeAll(keepingCapacity: true)
            byKey.removeAll(keepingCapacity: true)
        }
        byID[conversation.id] = conversation
        for key in conversation.keys { byKey[UserKey(userID: conversation.userID, key: key)] = conversation.id }
    }
}
