import RelayCore

/// `CoreJournal`'s turn writes and notification queues on PostgreSQL.
extension PostgresJournal {
    public func accept(_ message: UserMessage, now: Int64, queue: [QueueTarget], completion: @escaping (Result<Acceptance, any Error>) -> Void) {
        let runID = message.runID ?? Identifiers.newUUID()
        let write = TurnWrite.accept(
            message,
            runID: runID,
            eventID: Identifiers.newEventID(),
            answerID: Identifiers.newEventID(),
            at: now,
            queue: queue
        )
        submit(write, completion) { row in
            switch row.outcome {
            case .stored:
                guard let seq = row.seq, let answerSeq = row.answerSeq else { throw Self.malformed(write) }
                let event = ChatEvent(
                    id: write.eventID,
                    seq: seq,
                    userID: message.userID,
                    conversationID: message.conversationID,
                    role: .user,
                    content: message.content,
                    timestampMillis: now,
                    deviceID: message.deviceID,
                    attachmentsJSON: message.attachmentsJSON,
                    turn: TurnRef(runID: runID, deviceID: message.deviceID, clientID: message.clientID)
                )
                return .fresh(event, runID: runID, answer: AnswerSlot(id: write.answerEventID, seq: answerSeq))
            case .duplicate:
                let answer = row.answerEventID.flatMap { id in row.answerSeq.map { AnswerSlot(id: id, seq: $0) } }
                return .duplicate(MessageState(rawValue: Int(row.state ?? 2)) ?? .failed, runID: row.runID ?? runID, answer: answer)
            case .mismatch:
                return .mismatch
            case .rejected:
                guard let rejection = message.rejection else { throw Self.malformed(write) }
                return .rejected(rejection)
            case .missingAsset:
                return .missingAsset(row.eventID ?? "")
            case .fenced, .claim:
                throw Self.malformed(write)
            }
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
        var event = Self.assistantEvent(id: eventID, userID: userID, conversationID: conversationID, content: content, now: now, turn: turn)
        submit(.answer(event, turn: turn, queue: queue), completion) { row in
            event.seq = try Self.stored(row, turn: turn)
            return event
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
        var event = Self.assistantEvent(
            id: Identifiers.newEventID(),
            userID: userID,
            conversationID: conversationID,
            content: content,
            now: now,
            turn: nil
        )
        event.isNote = true
        submit(.note(event, queue: queue), completion) { row in
            event.seq = try Self.stored(row, turn: nil)
            return event
        }
    }

    /// Refused (`TurnFenced`) when the message is no longer active.
    public func fail(_ failure: TurnFailure, queue: [QueueTarget], completion: @escaping (Result<Int64, any Error>) -> Void) {
        submit(.failure(failure, queue: queue), completion) { row in try Self.stored(row, turn: failure.turn) }
    }

    /// Queues `write` on the writer; `result` turns its row into the caller's value on the loop.
    private func submit<R>(
        _ write: TurnWrite,
        _ completion: @escaping (Result<R, any Error>) -> Void,
        _ result: @escaping (TurnWriteRow) throws -> R
    ) {
        let done = LoopBound(
            { (row: Result<TurnWriteRow, PostgresStoreError>) in
                completion(Result { try result(row.get()) })
            },
            loop: writer.executor
        )
        writer.write(write) { row in done.value(row) }
    }

    /// The seq of a stored answer, failure or note; `TurnFenced` when its message had ended.
    private static func stored(_ row: TurnWriteRow, turn: TurnRef?) throws -> Int64 {
        if row.outcome == .fenced, let turn { throw TurnFenced(runID: turn.runID) }
        guard row.outcome == .stored, let seq = row.seq else {
            throw PostgresStoreError(code: .rejected, message: "relay_turn_writes answered \(row.outcome) for a write that cannot have it")
        }
        return seq
    }

    /// An answer (of `turn`) or a note (`turn` nil), its seq still to come.
    private static func assistantEvent(id: String, userID: String, conversationID: String, content: String, now: Int64, turn: TurnRef?) -> ChatEvent {
        ChatEvent(
            id: id,
            seq: 0,
            userID: userID,
            conversationID: conversationID,
            role: .assistant,
            content: content,
            timestampMillis: now,
            deviceID: nil,
            attachmentsJSON: nil,
            turn: turn
        )
    }

    private static func malformed(_ write: TurnWrite) -> PostgresStoreError {
        PostgresStoreError(code: .rejected, message: "relay_turn_writes answered an accept of \(write.clientID) with a row that does not fit it")
    }

    public func enqueue(_ item: QueueItem, now: Int64, queue: [QueueTarget]) {
        guard !queue.isEmpty else { return }
        background("queue an event") { connection, logger in
            try await connection.transaction(logger) {
                try await PostgresQueueQueries.enqueueStored(connection, item, targets: queue, at: now, logger: logger)
            }
        }
    }

    public func queued(deviceID: String, conversations: Set<String>?, now: Int64, completion: @escaping (Result<[QueuedEvent], any Error>) -> Void) {
        perform(
            "read a notification queue",
            { connection, logger in
                try await PostgresQueueQueries.pending(connection, deviceID: deviceID, conversations: conversations, at: now, logger: logger)
            },
            completion: completion
        )
    }

    public func dequeue(deviceID: String, ids: [Int64], completion: @escaping () -> Void) {
        perform(
            "delete delivered queue entries",
            { connection, logger in try await PostgresQueueQueries.delete(connection, deviceID: deviceID, ids: ids, logger: logger) },
            completion: { [self] result in
                if case .failure(let error) = result { report("delete delivered queue entries", error) }
                completion()
            }
        )
    }

    public func purgeQueues(now: Int64) {
        background("purge expired queue entries") { connection, logger in try await PostgresQueueQueries.purge(connection, at: now, logger: logger) }
    }
}

/// Every `CoreJournal` method is in `PostgresJournal+Messages.swift` (turn writes, queues),
/// `PostgresJournal+Conversations.swift` and `PostgresJournal.swift` (`barrier`, `batchTiming`).
extension PostgresJournal: CoreJournal {
    public func recordPresence(deviceID: String, state: DevicePresence.State, now: Int64) {
        background("record presence") { connection, logger in
            try await PostgresDeviceQueries.setPresence(connection, deviceID: deviceID, state, at: now, logger: logger)
        }
    }
}
