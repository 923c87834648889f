import RelayCore

/// Every journal of the core in memory: the relay's whole durable state as plain values. Work
/// happens at once; completions run on the loop later, in submission order, like the SQLite
/// journal's. Tests read the stored state straight from its properties.
public final class MemoryJournal {
    /// A client message as stored, with what the timeline shows of its answer.
    public struct Record: Equatable {
        public var message: UserMessageSummary
        public var state: MessageState
        public var runID: String
        public var answer: AnswerSlot
        public var userID: String
        public var conversationID: String
        public var deviceID: String
        public var clientID: String
        public var userEventID: String
        public var createdAt: Int64
        /// Why the turn ended without an answer, and the seq and time that failure took.
        public var reason: String?
        public var endedSeq: Int64?
        public var endedAt: Int64?
        public var cause: TurnFailure.Cause?
    }

    /// The stored parts of a message (what a retry is compared with).
    public struct UserMessageSummary: Equatable {
        public var contentHash: String
        public var attachmentsHash: String
    }

    struct QueueRow {
        var id: Int64
        /// Its place in the user's stream (a message's seq, a failure's): queues read in stream
        /// order, as the stores read them from the history, whenever an entry was queued.
        var order: Int64
        var deviceID: String
        var item: QueueItem
        var queuedAt: Int64
        var expiresAt: Int64
    }

    let loop: any LoopExecutor
    let clock: any Clock
    public internal(set) var conversations: [String: Conversation] = [:]
    public internal(set) var keys: [String: String] = [:]
    public internal(set) var events: [ChatEvent] = []
    public internal(set) var records: [String: Record] = [:]
    public internal(set) var presence: [String: DevicePresence.State] = [:]
    /// Read cursors by `user|conversation`.
    public internal(set) var cursors: [String: ReadCursor] = [:]
    var queueRows: [QueueRow] = []
    /// Each user's clock (events, answer slots, failures and conversation changes share it).
    var lastSeq: [String: Int64] = [:]
    private var nextQueueID: Int64 = 0
    /// Uploaded files' records by id.
    public var assets: [String: AssetRecord] = [:]
    /// Devices, their per-role tokens (by role) and bot pairings (bot id → token hash), by device id.
    public var devices: [String: DeviceRecord] = [:]
    public var deviceTokens: [String: [String: DeviceToken]] = [:]
    /// How many reads of a device by its bearer token were asked (`device(tokenHash:protocolName:)`).
    public internal(set) var tokenReads = 0
    public var botPairings: [String: [String: String]] = [:]
    /// One-time pairing links: token hash → (expiry, used).
    public var pairLinks: [String: (expiresAt: Int64, used: Bool)] = [:]
    /// The pending pairing requests' mirror, by `protocol|device`.
    public internal(set) var pendingPairings: [String: PendingPairing] = [:]
    /// Upstream accounts' last reported states, by name.
    public internal(set) var accounts: [String: AccountStatus] = [:]
    /// Push targets by device, pushes not sent yet, retired targets, send attempts.
    public var pushDevices: [PushDevice] = []
    public var pendingPushes: [String: PendingPush] = [:]
    /// Who holds a pending push (`PushClaims`), and until when, by push id.
    public internal(set) var pushClaims: [String: (node: NodeIncarnation, until: Int64)] = [:]
    public internal(set) var retiredTargets: [(target: PushTarget, reason: String)] = []
    public internal(set) var pushAttempts: [PushAttempt] = []
    /// Run reports by run id, and approval records by approval id.
    public internal(set) var turnReports: [String: TurnReportRecord] = [:]
    public internal(set) var approvals: [String: ApprovalRecord] = [:]
    /// The cluster's turn queue by run id (`TurnLedger`), and every run ever registered in it.
    var ledger: [String: LedgerEntry] = [:]
    var ledgerRuns: Set<String> = []
    /// Node incarnations declared dead: their claims are refused.
    var deadNodes: Set<NodeIncarnation> = []
    /// Each node's presence of a device (`NodePresenceJournal`), by device.
    public internal(set) var nodePresence: [String: [NodeIncarnation: DevicePresence.State]] = [:]
    /// When set, every write that reports back fails with this error.
    public var failWrites: (any Error)?

    public init(loop: any LoopExecutor, clock: any Clock = TestClock()) {
        self.loop = loop
        self.clock = clock
    }

    func later<T>(_ value: Result<T, any Error>, _ completion: @escaping (Result<T, any Error>) -> Void) {
        loop.execute(with: (value, completion)) { $0.1($0.0) }
    }

    /// `later`, failing with `failWrites` when it is set.
    func write<T>(_ completion: @escaping (Result<T, any Error>) -> Void, _ work: () throws -> T) {
        if let error = failWrites { return later(.failure(error), completion) }
        later(Result { try work() }, completion)
    }

    /// The user's next seq.
    func nextSeq(_ userID: String) -> Int64 {
        let seq = (lastSeq[userID] ?? 0) + 1
        lastSeq[userID] = seq
        return seq
    }

    /// The queue of a device as it stands, oldest first.
    public func queue(of deviceID: String) -> [QueueItem] { queueRows.filter { $0.deviceID == deviceID }.map(\.item) }

    /// The user's cursor in a conversation (0 when there is none).
    public func cursor(userID: String, conversationID: String) -> Int64 { cursors["\(userID)|\(conversationID)"]?.seq ?? 0 }

    @discardableResult
    func moveCursor(userID: String, conversationID: String, seq: Int64, now: Int64) -> ReadCursor? {
        let key = "\(userID)|\(conversationID)"
        guard seq > (cursors[key]?.seq ?? 0) else { return nil }
        let cursor = ReadCursor(userID: userID, conversationID: conversationID, seq: seq, updatedAt: now)
        cursors[key] = cursor
        return cursor
    }

    func append(_ event: ChatEvent, queue: [QueueTarget], now: Int64) -> ChatEvent {
        var event = event
        event.seq = nextSeq(event.userID)
        events.append(event)
        conversations[event.conversationID]?.updatedAt = now
        enqueue(.message(event), now: now, queue: queue)
        return event
    }
}

extension MemoryJournal: CoreJournal {
    private static func key(_ userID: String, _ key: ConversationKey) -> String { "\(userID)|\(key.scheme)|\(key.value)" }

    public func resolveConversation(
        _ key: ConversationKey,
        userID: String,
        draft: ConversationDraft,
        now: Int64,
        completion: @escaping (Result<Conversation, any Error>) -> Void
    ) {
        if let id = keys[Self.key(userID, key)], let conversation = conversations[id] { return later(.success(conversation), completion) }
        var conversation = Conversation(
            id: Conversation.newID(),
            userID: userID,
            title: draft.title,
            backend: draft.backend,
            workingDirectory: draft.workingDirectory,
            createdAt: now,
            updatedAt: now,
            keys: [key] + draft.extraKeys
        )
        conversation.settings = draft.settings
        conversation.changeSeq = nextSeq(userID)
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
        later(.success(Array(list(userID: userID).prefix(limit))), completion)
    }

    /// A user's conversations, most recently updated first.
    func list(userID: String) -> [Conversation] {
        conversations.values.filter { $0.userID == userID }.sorted { ($0.updatedAt, $1.id) > ($1.updatedAt, $0.id) }
    }

    public func edit(
        conversationID: String,
        _ edit: ConversationEdit,
        now: Int64,
        completion: @escaping (Result<Conversation?, any Error>) -> Void
    ) {
        write(completion) {
            guard var conversation = conversations[conversationID] else { return nil }
            edit.apply(to: &conversation, at: now)
            conversation.changeSeq = nextSeq(conversation.userID)
            conversations[conversationID] = conversation
            return conversation
        }
    }

    public func deleteConversation(id: String, completion: @escaping (Result<Bool, any Error>) -> Void) {
        write(completion) {
            guard conversations.removeValue(forKey: id) != nil else { return false }
            keys = keys.filter { $0.value != id }
            events.removeAll { $0.conversationID == id }
            records = records.filter { $0.value.conversationID != id }
            queueRows.removeAll { $0.item.conversationID == id }
            pendingPushes = pendingPushes.filter { $0.value.conversationID != id }
            cursors = cursors.filter { $0.value.conversationID != id }
            return true
        }
    }

    public func addKey(_ key: ConversationKey, to conversation: Conversation, completion: @escaping (Result<Void, any Error>) -> Void) {
        keys[Self.key(conversation.userID, key)] = conversation.id
        if conversations[conversation.id]?.keys.contains(key) == false { conversations[conversation.id]?.keys.append(key) }
        later(.success(()), completion)
    }

    public func saveBackendSession(_ session: String?, conversationID: String) {
        conversations[conversationID]?.backendSession = session
    }

    public func accept(_ message: UserMessage, now: Int64, queue: [QueueTarget], completion: @escaping (Result<Acceptance, any Error>) -> Void) {
        write(completion) {
            let recordKey = "\(message.deviceID)|\(message.clientID)"
            let summary = UserMessageSummary(contentHash: message.contentHash, attachmentsHash: message.attachmentsHash)
            if let existing = records[recordKey] {
                guard existing.message == summary else { return .mismatch }
                return .duplicate(existing.state, runID: existing.runID, answer: existing.answer)
            }
            if let rejection = message.rejection { return .rejected(rejection) }
            if let missing = message.assetIDs.first(where: { assets[$0]?.userID != message.senderID }) { return .missingAsset(missing) }
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
            moveCursor(userID: message.senderID, conversationID: message.conversationID, seq: event.seq, now: now)
            let answer = AnswerSlot(id: Identifiers.newEventID(), seq: nextSeq(message.userID))
            if let node = message.acceptingNode {
                register(runID: runID, conversationID: message.conversationID, order: event.seq, node: node, backend: message.policyBackend)
            }
            records[recordKey] = Record(
                message: summary,
                state: .active,
                runID: runID,
                answer: answer,
                userID: message.userID,
                conversationID: message.conversationID,
                deviceID: message.deviceID,
                clientID: message.clientID,
                userEventID: event.id,
                createdAt: now
            )
            return .fresh(event, runID: runID, answer: answer)
        }
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
        write(completion) {
            try settle(runID: turn.runID, record: "\(turn.deviceID)|\(turn.clientID)")
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
            return append(event, queue: queue, now: now)
        }
    }

    public func note(
        userID: String,
        conversationID: String,
        content: String,
        now: Int64,
        queue: [QueueTarget],
        completion: @escaping (Result<ChatEvent, any Error>) -> Void
    ) {
        write(completion) {
            let event = ChatEvent(
                id: Identifiers.newEventID(),
                seq: 0,
                userID: userID,
                conversationID: conversationID,
                role: .assistant,
                content: content,
                timestampMillis: now,
                deviceID: nil,
                attachmentsJSON: nil,
                isNote: true
            )
            return append(event, queue: queue, now: now)
        }
    }

    public func fail(_ failure: TurnFailure, queue: [QueueTarget], completion: @escaping (Result<Int64, any Error>) -> Void) {
        let key = "\(failure.turn.deviceID)|\(failure.turn.clientID)"
        do { try settle(runID: failure.turn.runID, record: key) } catch { return later(.failure(error), completion) }
        let seq = nextSeq(failure.userID)
        if records[key] != nil {
            records[key]?.state = failure.cause == .aborted ? .aborted : .failed
            records[key]?.reason = failure.reason
            records[key]?.endedSeq = seq
            records[key]?.endedAt = failure.timestampMillis
            records[key]?.cause = failure.cause
        }
        enqueue(.failure(failure), now: failure.timestampMillis, queue: queue)
        later(.success(seq), completion)
    }

    public func enqueue(_ item: QueueItem, now: Int64, queue: [QueueTarget]) {
        for target in queue {
            nextQueueID += 1
            let row = QueueRow(
                id: nextQueueID,
                order: order(of: item),
                deviceID: target.deviceID,
                item: item,
                queuedAt: now,
                expiresAt: now + target.ttlMillis
            )
            queueRows.insert(row, at: queueRows.firstIndex { $0.order > row.order } ?? queueRows.endIndex)
            let rows = queueRows.filter { $0.deviceID == target.deviceID }
            if rows.count > target.capacity {
                let drop = Set(rows.prefix(rows.count - target.capacity).map(\.id))
                queueRows.removeAll { drop.contains($0.id) }
            }
        }
    }

    /// A queue item's place in its stream: a message's seq, a failure's seq from its record.
    private func order(of item: QueueItem) -> Int64 {
        switch item {
        case .message(let event): event.seq
        case .failure(let failure): records["\(failure.turn.deviceID)|\(failure.turn.clientID)"]?.endedSeq ?? Int64.max
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

    public func barrier(_ completion: @escaping () -> Void) { later(.success(())) { _ in completion() } }

    public func purgeQueues(now: Int64) { queueRows.removeAll { $0.expiresAt <= now } }

    public func recordPresence(deviceID: String, state: DevicePresence.State, now: Int64) {
        presence[deviceID] = state
        devices[deviceID]?.presence = state.rawValue
    }

    public func markRead(
        userID: String,
        conversationID: String,
        seq: Int64,
        now: Int64,
        completion: @escaping (Result<ReadCursor?, any Error>) -> Void
    ) {
        write(completion) {
            let newest = events.filter { $0.conversationID == conversationID }.map(\.seq).max() ?? 0
            return moveCursor(userID: userID, conversationID: conversationID, seq: min(seq, newest), now: now)
        }
    }
}
