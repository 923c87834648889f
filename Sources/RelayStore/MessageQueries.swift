import GRDB
import RelayCore

public enum MessageQueries {
    /// Stores the message and its user event atomically unless its client id was seen before,
    /// queues the event for `queue` and moves the sender's read cursor to it.
    public static func accept(_ db: Database, _ message: UserMessage, at millis: Int64, queue: [QueueTarget]) throws -> Acceptance {
        try accept(db, message, at: millis, queue: queue, statements: WriterStatements(db))
    }

    static func accept(
        _ db: Database,
        _ message: UserMessage,
        at millis: Int64,
        queue: [QueueTarget],
        statements: WriterStatements
    ) throws -> Acceptance {
        // A fresh message (the common case) costs one index probe, not a full row read.
        let seen =
            try statements.int64(.messageExists) {
                $0.bind(1, message.deviceID)
                $0.bind(2, message.clientID)
            } != nil
        if seen, let existing = try fetch(db, deviceID: message.deviceID, clientID: message.clientID) {
            guard existing.contentHash == message.contentHash, existing.attachmentsHash == message.attachmentsHash else { return .mismatch }
            return .duplicate(existing.state, runID: existing.runID, answer: existing.answer)
        }
        if let rejection = message.rejection { return .rejected(rejection) }
        for assetID in message.assetIDs {
            guard let asset = try AssetQueries.fetch(db, id: assetID), asset.userID == message.senderID else { return .missingAsset(assetID) }
        }
        let runID = message.runID ?? Identifiers.newUUID()
        // The message and its answer's slot: two consecutive seqs, taken in one statement.
        let seq = try SeqQueries.next(statements, userID: message.userID, count: 2)
        let event = try EventQueries.append(
            statements,
            userID: message.userID,
            conversationID: message.conversationID,
            role: .user,
            content: message.content,
            deviceID: message.deviceID,
            attachmentsJSON: message.attachmentsJSON,
            at: millis,
            id: Identifiers.newEventID(),
            seq: seq,
            turn: TurnRef(runID: runID, deviceID: message.deviceID, clientID: message.clientID),
            queue: queue
        )
        try ReadCursorQueries.advanceOnSend(statements, message, seq: event.seq, at: millis)
        let answer = AnswerSlot(id: Identifiers.newEventID(), seq: seq + 1)
        try statements.run(.messageInsert) {
            $0.bind(1, message.deviceID)
            $0.bind(2, message.clientID)
            $0.bind(3, message.userID)
            $0.bind(4, message.contentHash)
            $0.bind(5, message.attachmentsHash)
            $0.bind(6, event.id)
            $0.bind(7, millis)
            $0.bind(8, message.conversationID)
            $0.bind(9, runID)
            $0.bind(10, answer.id)
            $0.bind(11, answer.seq)
        }
        return .fresh(event, runID: runID, answer: answer)
    }

    public static func fetch(_ db: Database, deviceID: String, clientID: String) throws -> MessageRecord? {
        guard let row = try db.row("SELECT * FROM messages WHERE device_id = ? AND client_id = ?", [deviceID, clientID]) else { return nil }
        return MessageRecord(
            deviceID: row["device_id"],
            clientID: row["client_id"],
            contentHash: row["content_hash"],
            attachmentsHash: row["attachments_hash"],
            state: MessageState(rawValue: row["streaming"]) ?? .failed,
            userEventID: row["user_event_id"],
            assistantEventID: row["assistant_event_id"],
            runID: row["run_id"] ?? row["client_id"],
            reason: row["reason"],
            answerSeq: row["answer_seq"],
            userID: row["user_id"],
            conversationID: row["conversation_id"]
        )
    }

    /// Records a turn that ended without an answer, and queues the failure for `queue`; returns the
    /// seq the failure took.
    @discardableResult
    public static func fail(_ db: Database, _ failure: TurnFailure, queue: [QueueTarget]) throws -> Int64 {
        let state: MessageState = failure.cause == .aborted ? .aborted : .failed
        let seq = try SeqQueries.next(db, userID: failure.userID)
        try db.run(
            """
            UPDATE messages SET streaming = ?, reason = ?, ended_seq = ?, ended_at = ?, assistant_event_id = COALESCE(?, assistant_event_id)
            WHERE device_id = ? AND client_id = ?
            """,
            [state.rawValue, failure.reason, seq, failure.timestampMillis, failure.answerID, failure.turn.deviceID, failure.turn.clientID]
        )
        try ConversationQueries.touch(db, id: failure.conversationID, at: failure.timestampMillis)
        try QueueQueries.enqueue(db, .failure(failure), targets: queue, at: failure.timestampMillis)
        return seq
    }

    /// Persists the assistant's answer, finalizes the record and queues the answer for `queue`.
    public static func finalize(
        _ db: Database,
        turn: TurnRef,
        userID: String,
        conversationID: String,
        eventID: String,
        content: String,
        at millis: Int64,
        queue: [QueueTarget]
    ) throws -> ChatEvent {
        try finalize(
            db,
            turn: turn,
            userID: userID,
            conversationID: conversationID,
            eventID: eventID,
            content: content,
            at: millis,
            queue: queue,
            statements: WriterStatements(db)
        )
    }

    static func finalize(
        _ db: Database,
        turn: TurnRef,
        userID: String,
        conversationID: String,
        eventID: String,
        content: String,
        at millis: Int64,
        queue: [QueueTarget],
        statements: WriterStatements
    ) throws -> ChatEvent {
        let seq = try SeqQueries.next(statements, userID: userID)
        let event = try EventQueries.append(
            statements,
            userID: userID,
            conversationID: conversationID,
            role: .assistant,
            content: content,
            deviceID: nil,
            attachmentsJSON: nil,
            at: millis,
            id: eventID,
            seq: seq,
            turn: turn,
            queue: queue
        )
        try statements.run(.messageFinalize) {
            $0.bind(1, eventID)
            $0.bind(2, turn.deviceID)
            $0.bind(3, turn.clientID)
        }
        return event
    }

    /// Stores the relay's note in a conversation: an assistant event no turn owns, queued for `queue`.
    static func note(
        _ db: Database,
        userID: String,
        conversationID: String,
        content: String,
        at millis: Int64,
        queue: [QueueTarget],
        statements: WriterStatements
    ) throws -> ChatEvent {
        let event = try EventQueries.append(
            statements,
            userID: userID,
            conversationID: conversationID,
            role: .assistant,
            content: content,
            deviceID: nil,
            attachmentsJSON: nil,
            at: millis,
            id: Identifiers.newEventID(),
            seq: try SeqQueries.next(statements, userID: userID),
            isNote: true,
            queue: queue
        )
        return event
    }

    /// Turns cannot survive a restart: every active record becomes failed, at a fresh seq of its
    /// user's clock. Returns them.
    public static func failActive(_ db: Database, at millis: Int64) throws -> [MessageRecord] {
        let rows = try db.rows("SELECT device_id, client_id FROM messages WHERE streaming = 1")
        let records = try rows.compactMap { try fetch(db, deviceID: $0["device_id"], clientID: $0["client_id"]) }
        for record in records {
            try db.run(
                "UPDATE messages SET streaming = 2, reason = 'the relay restarted', ended_seq = ?, ended_at = ? WHERE device_id = ? AND client_id = ?",
                [try SeqQueries.next(db, userID: record.userID), millis, record.deviceID, record.clientID]
            )
        }
        return records
    }
}
