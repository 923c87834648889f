import RelayCore

/// `CoreJournal`'s turn writes and notification queues on PostgreSQL.
extension PostgresJournal {
    public func accept(_ message: UserMessage, now: Int64, queue: [QueueTarget], completion: @escaping (Result<Acceptance, any Error>) -> Void) {
        performTransaction(
            "accept a message",
            { connection, logger in try await PostgresMessageQueries.accept(connection, message, at: now, queue: queue, logger: logger) },
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
        performTransaction(
            "store an answer",
            { connection, logger in
                try await PostgresMessageQueries.finish(
                    connection,
                    turn: turn,
                    userID: userID,
                    conversationID: conversationID,
                    eventID: eventID,
                    content: content,
                    at: now,
                    queue: queue,
                    logger: logger
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
        performTransaction(
            "store a note",
            { connection, logger in
                try await PostgresMessageQueries.note(
                    connection,
                    userID: userID,
                    conversationID: conversationID,
                    content: content,
                    at: now,
                    queue: queue,
                    logger: logger
                )
            },
            completion: completion
        )
    }

    public func fail(_ failure: TurnFailure, queue: [QueueTarget], completion: @escaping (Result<Int64, any Error>) -> Void) {
        performTransaction(
            "store a failed turn",
            { connection, logger in try await PostgresMessageQueries.fail(connection, failure, queue: queue, logger: logger) },
            completion: completion
        )
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
