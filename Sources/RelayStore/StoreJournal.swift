import RelayCore

/// The core's journal over the relay's SQLite store: every call is one operation of the store
/// writer, so completions arrive on the loop after commit, in submission order.
public final class StoreJournal: CoreJournal {
    let store: Store
    let clock: any Clock
    private let onError: @Sendable (String, any Error) -> Void

    /// `onError` hears about writes nobody waits for (queue upkeep, presence) that failed.
    public init(store: Store, clock: any Clock = SystemClock(), onError: @escaping @Sendable (String, any Error) -> Void) {
        self.store = store
        self.clock = clock
        self.onError = onError
    }

    public func resolveConversation(
        _ key: ConversationKey,
        userID: String,
        draft: ConversationDraft,
        now: Int64,
        completion: @escaping (Result<Conversation, any Error>) -> Void
    ) {
        store.perform({ db in try ConversationQueries.resolve(db, key: key, userID: userID, draft: draft, at: now) }, completion: completion)
    }

    public func findConversation(_ key: ConversationKey, userID: String, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        store.perform(
            { db in try ConversationQueries.conversationID(db, key: key, userID: userID).flatMap { try ConversationQueries.fetch(db, id: $0) } },
            completion: completion
        )
    }

    public func conversation(id: String, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        store.perform({ db in try ConversationQueries.fetch(db, id: id) }, completion: completion)
    }

    public func conversations(userID: String, limit: Int, completion: @escaping (Result<[Conversation], any Error>) -> Void) {
        store.perform({ db in try ConversationQueries.list(db, userID: userID, limit: limit) }, completion: completion)
    }

    public func edit(conversationID: String, _ edit: ConversationEdit, now: Int64, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        store.perform({ db in try ConversationQueries.update(db, id: conversationID) { edit.apply(to: &$0, at: now) } }, completion: completion)
    }

    public func deleteConversation(id: String, completion: @escaping (Result<Bool, any Error>) -> Void) {
        store.perform({ db in try ConversationQueries.delete(db, id: id) }, completion: completion)
    }

    public func addKey(_ key: ConversationKey, to conversation: Conversation, completion: @escaping (Result<Void, any Error>) -> Void) {
        let (id, userID) = (conversation.id, conversation.userID)
        store.perform({ db in try ConversationQueries.addKey(db, key, conversationID: id, userID: userID) }, completion: completion)
    }

    public func saveBackendSession(_ session: String?, conversationID: String) {
        background("store a backend session") { db in try ConversationQueries.setBackendSession(db, session, conversationID: conversationID) }
    }

    public var batchTiming: JournalBatchTiming? { store.batchTiming }

    public func barrier(_ completion: @escaping () -> Void) { store.perform({ _ in }, completion: { _ in completion() }) }

    public func accept(_ message: UserMessage, now: Int64, queue: [QueueTarget], completion: @escaping (Result<Acceptance, any Error>) -> Void) {
        store.perform(
            writing: { db, statements in try MessageQueries.accept(db, message, at: now, queue: queue, statements: statements) },
            completion: completion
        )
    }

    public func finish(
        _ turn: TurnRef,
        userID: String,
        conversationID: String,
        eventID: String,
        content: String,
        now: Int64,
        queue: [QueueTarget],
        completion: @escaping (Result<ChatEvent, any Error>) -> Void
    ) {
        store.perform(
            writing: { db, statements in
                try MessageQueries.finalize(
                    db,
                    turn: turn,
                    userID: userID,
                    conversationID: conversationID,
                    eventID: eventID,
                    content: content,
                    at: now,
                    queue: queue,
                    statements: statements
                )
            },
            completion: completion
        )
    }

    public func note(
        userID: String,
        conversationID: String,
        content: String,
        now: Int64,
        queue: [QueueTarget],
        completion: @escaping (Result<ChatEvent, any Error>) -> Void
    ) {
        store.perform(
            writing: { db, statements in
                try MessageQueries.note(
                    db,
                    userID: userID,
                    conversationID: conversationID,
                    content: content,
                    at: now,
                    queue: queue,
                    statements: statements
                )
            },
            completion: completion
        )
    }

    public func fail(_ failure: TurnFailure, queue: [QueueTarget], completion: @escaping (Result<Int64, any Error>) -> Void) {
        store.perform({ db in try MessageQueries.fail(db, failure, queue: queue) }, completion: completion)
    }

    public func enqueue(_ item: QueueItem, now: Int64, queue: [QueueTarget]) {
        background("queue an event") { db in try QueueQueries.enqueue(db, item, targets: queue, at: now) }
    }

    public func queued(deviceID: String, conversations: Set<String>?, now: Int64, completion: @escaping (Result<[QueuedEvent], any Error>) -> Void) {
        store.perform({ db in try QueueQueries.pending(db, deviceID: deviceID, conversations: conversations, at: now) }, completion: completion)
    }

    public func dequeue(deviceID: String, ids: [Int64], completion: @escaping () -> Void) {
        let onError = onError
        store.perform(
            { db in try QueueQueries.delete(db, deviceID: deviceID, ids: ids) },
            completion: { result in
                if case .failure(let error) = result { onError("delete delivered queue entries", error) }
                completion()
            }
        )
    }

    public func purgeQueues(now: Int64) {
        background("purge expired queue entries") { db in _ = try QueueQueries.purge(db, at: now) }
    }

    public func recordPresence(deviceID: String, state: DevicePresence.State, now: Int64) {
        background("record presence") { db in try DeviceQueries.setPresence(db, id: deviceID, state.rawValue, at: now) }
    }

    public func markRead(
        userID: String,
        conversationID: String,
        seq: Int64,
        now: Int64,
        completion: @escaping (Result<ReadCursor?, any Error>) -> Void
    ) {
        store.perform(
            { db in try ReadCursorQueries.markRead(db, userID: userID, conversationID: conversationID, seq: seq, at: now) },
            completion: completion
        )
    }

    func background(_ what: String, _ work: @escaping @Sendable (StoreTransaction) throws -> Void) {
        let onError = onError
        store.perform(work) { result in
            if case .failure(let error) = result { onError(what, error) }
        }
    }
}
