import RelayCore

/// The core's journal in memory. Work happens at once; completions run on the loop later, in
/// submission order, like the SQLite writer's.
public final class MemoryJournal: CoreJournal {
    public struct Record: Equatable {
        public var message: UserMessageSummary
        public var state: MessageState
        public var runID: String
        public var answer: AnswerSlot
    }

    /// The stored parts of a message (what a retry is compared with).
    public struct UserMessageSummary: Equatable {
        public var contentHash: String
        public var attachmentsHash: String
    }

    struct QueueRow {
        var id: Int64
        var deviceID: String
        var item: QueueItem
        var queuedAt: Int64
        var expiresAt: Int64
    }

    private let loop: any LoopExecutor
    public private(set) var conversations: [String: Conversation] = [:]
    public private(set) var keys: [String: String] = [:]
    public private(set) var events: [ChatEvent] = []
    public private(set) var records: [String: Record] = [:]
    public private(set) var presence: [String: DevicePresence.State] = [:]
    /// Read cursors by `user|conversation`.
    public private(set) var cursors: [String: ReadCursor] = [:]
    var queueRows: [QueueRow] = []
    /// Each user's clock (events and answer slots share it).
    private var lastSeq: [String: Int64] = [:]
    private var nextQueueID: Int64 = 0
    /// Asset ids that exist, by owner.
    public var assets: [String: String] = [:]
    /// When set, every write fails with this error.
    public var failWrites: (any Error)?

    public init(loop: any LoopExecutor) { self.loop = loop }

    private func later<T>(_ value: Result<T, any Error>, _ completion: @escaping (Result<T, any Error>) -> Void) {
        loop.execute(with: (value, completion)) { $0.1($0.0) }
    }

    private static func key(_ userID: String, _ key: ConversationKey) -> String { "\(userID)|\(key.scheme)|\(key.value)" }

    /// The queue of a device as it stands, oldest first.
    public func queue(of deviceID: String) -> [QueueItem] { queueRows.filter { $0.deviceID == deviceID }.map(\.item) }

    public func resolveConversation(
        _ key: ConversationKey,
        userID: String,
        draft: ConversationDraft,
        now: Int64,
        completion: @escaping (Result<Conversation, any Error>) -> Void
    ) {
        if let id = keys[Self.key(userID, key)], let conversation = conversations[id] { return later(.success(conversation), completion) }
        let conversation = Conversation(
            id: Conversation.newID(),
            userID: userID,
            title: draft.title,
            backend: draft.backend,
            workingDirectory: draft.workingDirectory,
            createdAt: now,
            updatedAt: now,
            keys: [key] + draft.extraKeys
        )
        conversations[conversation.id] = conversation
        for name in [key] + draft.extraKeys { keys[Self.key(userID, name)] = conversation.id }
        later(.success(conversation), completion)
    }

    public func findConversation(_ key: ConversationKey, userID: String, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        later(.success(keys[Self.key(userID, key)].flatMap { conversations[$0] }), completion)
    }

    public func conversation(id: String, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        later(.success(conversations[id]), completion)
    }

    public func conversations(userID: String, limit: Int, completion: @escaping (Result<[Conversation], any Error>) -> Void) {
        let list = conversations.values.filter { $0.userID == userID }.sorted { $0.updatedAt > $1.updatedAt }
        later(.success(Array(list.prefix(limit))), completion)
    }

    public func edit(conversationID: String, _ edit: ConversationEdit, now: Int64, completion: @escaping (Result<Conversation?, any Error>) -> Void) {
        if var conversation = conversations[conversationID] {
            edit.apply(to: &conversation)
            conversation.updatedAt = now
            conversations[conversationID] = conversation
        }
        later(.success(conversations[conversationID]), completion)
    }

    public func addKey(_ key: ConversationKey, to conversation: Conversation, completion: @escaping (Result<Void, any Error>) -> Void) {
        keys[Self.key(conversation.userID, key)] = conversation.id
        if conversations[conversation.id]?.keys.contains(key) == false { conversations[conversation.id]?.keys.append(key) }
        later(.success(()), completion)
    }

    public func saveBackendSession(_ session: String?, conversationID: String) {
        conversations[conversationID]?.backendSession = session
    }

    private func append(_ event: ChatEvent, queue: [QueueTarget], now: Int64) -> ChatEvent {
        var event = event
        event.seq = (lastSeq[event.userID] ?? 0) + 1
        lastSeq[event.userID] = event.seq
        events.append(event)
        conversations[event.conversationID]?.updatedAt = now
        enqueue(.message(event), now: now, queue: queue)
        return event
    }

    public func accept(_ message: UserMessage, now: Int64, queue: [QueueTarget], completion: @escaping (Result<Acceptance, any Error>) -> Void) {
        if let error = failWrites { return later(.failure(error), completion) }
        let recordKey = "\(message.deviceID)|\(message.clientID)"
        let summary = UserMessageSummary(contentHash: message.contentHash, attachmentsHash: message.attachmentsHash)
        if let existing = records[recordKey] {
            guard existing.message == summary else { return later(.success(.mismatch), completion) }
            return later(.success(.duplicate(existing.state, runID: existing.runID, answer: existing.answer)), completion)
        }
        if let rejection = message.rejection { return later(.success(.rejected(rejection)), completion) }
        if let missing = message.assetIDs.first(where: { assets[$0] != message.senderID }) {
            return later(.success(.missingAsset(missing)), completion)
        }
        let runID = message.runID ?? Identifiers.newUUID()
        let event = append(
            ChatEvent(
                id: Identifiers.newEventID(),
                seq: 0,
                userID: message.userID,
                conversationID: message.conversationID,
                role: .user,
                content: message.content,
                timestampMillis: now,
                deviceID: message.deviceID,
                attachmentsJSON: message.attachmentsJSON,
                turn: TurnRef(runID: runID, deviceID: message.deviceID, clientID: message.clientID)
            ),
            queue: queue,
            now: now
        )
        lastSeq[message.userID] = event.seq + 1
        moveCursor(userID: message.senderID, conversationID: message.conversationID, seq: event.seq, now: now)
        let answer = AnswerSlot(id: Identifiers.newEventID(), seq: event.seq + 1)
        records[recordKey] = Record(message: summary, state: .active, runID: runID, answer: answer)
        later(.success(.fresh(event, runID: runID, answer: answer)), completion)
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
        if let error = failWrites { return later(.failure(error), completion) }
        records["\(turn.deviceID)|\(turn.clientID)"]?.state = .finalized
        var event = ChatEvent(
            id: eventID,
            seq: 0,
            userID: userID,
            conversationID: conversationID,
            role: .assistant,
            content: content,
            timestampMillis: now,
            deviceID: nil,
            attachmentsJSON: nil
        )
        event.turn = turn
        later(.success(append(event, queue: queue, now: now)), completion)
    }

    public func fail(_ failure: TurnFailure, queue: [QueueTarget], completion: @escaping (Result<Void, any Error>) -> Void) {
        records["\(failure.turn.deviceID)|\(failure.turn.clientID)"]?.state = failure.cause == .aborted ? .aborted : .failed
        enqueue(.failure(failure), now: failure.timestampMillis, queue: queue)
        later(.success(()), completion)
    }

    public func enqueue(_ item: QueueItem, now: Int64, queue: [QueueTarget]) {
        for target in queue {
            nextQueueID += 1
            queueRows.append(QueueRow(id: nextQueueID, deviceID: target.deviceID, item: item, queuedAt: now, expiresAt: now + target.ttlMillis))
            let rows = queueRows.filter { $0.deviceID == target.deviceID }
            if rows.count > target.capacity {
                let drop = Set(rows.prefix(rows.count - target.capacity).map(\.id))
                queueRows.removeAll { drop.contains($0.id) }
            }
        }
    }

    public func queued(deviceID: String, conversations: Set<String>?, now: Int64, completion: @escaping (Result<[QueuedEvent], any Error>) -> Void) {
        let rows = queueRows.filter {
            $0.deviceID == deviceID && $0.expiresAt > now && (conversations?.contains($0.item.conversationID) ?? true)
        }
        later(.success(rows.map { QueuedEvent(id: $0.id, item: $0.item, queuedAt: $0.queuedAt) }), completion)
    }

    public func dequeue(deviceID: String, ids: [Int64], completion: @escaping () -> Void) {
        let done = Set(ids)
        queueRows.removeAll { $0.deviceID == deviceID && done.contains($0.id) }
        later(.success(())) { _ in completion() }
    }

    public func purgeQueues(now: Int64) { queueRows.removeAll { $0.expiresAt <= now } }

    public func recordPresence(deviceID: String, state: DevicePresence.State, now: Int64) { presence[deviceID] = state }

    public func markRead(
        userID: String,
        conversationID: String,
        seq: Int64,
        now: Int64,
        completion: @escaping (Result<ReadCursor?, any Error>) -> Void
    ) {
        if let error = failWrites { return later(.failure(error), completion) }
        let newest = events.filter { $0.conversationID == conversationID }.map(\.seq).max() ?? 0
        later(.success(moveCursor(userID: userID, conversationID: conversationID, seq: min(seq, newest), now: now)), completion)
    }

    /// The user's cursor in a conversation (0 when there is none).
    public func cursor(userID: String, conversationID: String) -> Int64 { cursors["\(userID)|\(conversationID)"]?.seq ?? 0 }

    @discardableResult
    private func moveCursor(userID: String, conversationID: String, seq: Int64, now: Int64) -> ReadCursor? {
        let key = "\(userID)|\(conversationID)"
        guard seq > (cursors[key]?.seq ?? 0) else { return nil }
        let cursor = ReadCursor(userID: userID, conversationID: conversationID, seq: seq, updatedAt: now)
        cursors[key] = cursor
        return cursor
    }
}
