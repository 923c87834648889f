import Foundation
import Logging
import PostgresNIO
import RelayCore

/// The durable writes of a turn: a message accepted, its answer, a failure, a relay note. Each
/// runs inside the caller's transaction, takes its seqs with `relay_take_seqs` (whose row lock
/// makes seq order commit order) and announces what it wrote with `relay_notify`. The rows are
/// as `PostgresSchema.journal` describes them.
enum PostgresMessageQueries {
    /// `CoreJournal.accept`: idempotent per (device, client id).
    static func accept(
        _ connection: PostgresConnection,
        _ message: UserMessage,
        at millis: Int64,
        queue: [QueueTarget],
        logger: Logger
    ) async throws -> Acceptance {
        if let stored = try await stored(connection, deviceID: message.deviceID, clientID: message.clientID, logger: logger) {
            guard stored.contentHash == message.contentHash, stored.attachmentsHash == message.attachmentsHash else { return .mismatch }
            return .duplicate(stored.state, runID: stored.runID, answer: stored.answer)
        }
        if let rejection = message.rejection { return .rejected(rejection) }
        for assetID in message.assetIDs {
            let owner = try await connection.first(
                "SELECT user_id FROM assets WHERE id = \(assetID)",
                as: String.self,
                logger: logger
            )
            guard owner == message.senderID else { return .missingAsset(assetID) }
        }
        let runID = message.runID ?? Identifiers.newUUID()
        // The message and its answer's slot: two consecutive seqs.
        let last = try await takeSeqs(connection, stream: message.userID, count: 2, logger: logger)
        let turn = TurnRef(runID: runID, deviceID: message.deviceID, clientID: message.clientID)
        let event = ChatEvent(
            id: Identifiers.newEventID(),
            seq: last - 1,
            userID: message.userID,
            conversationID: message.conversationID,
            role: .user,
            content: message.content,
            timestampMillis: millis,
            deviceID: message.deviceID,
            attachmentsJSON: message.attachmentsJSON,
            turn: turn
        )
        let answer = AnswerSlot(id: Identifiers.newEventID(), seq: last)
        try await insert(connection, event, kind: 0, role: 0, runID: runID, logger: logger)
        try await connection.query(
            """
            INSERT INTO messages (device_id, client_id, stream_id, conversation_id, run_id, content_hash, attachments_hash, state,
              user_event_id, answer_event_id, answer_seq, created_ms)
            VALUES (\(message.deviceID), \(message.clientID), \(message.userID), \(message.conversationID), \(runID), \(message.contentHash),
              \(message.attachmentsHash), 1, \(event.id), \(answer.id), \(answer.seq), \(millis))
            """,
            logger: logger
        )
        // One's own message is never unread.
        try await connection.query(
            """
            INSERT INTO read_cursors (user_id, conversation_id, seq, updated_ms) VALUES (\(message.senderID), \(message.conversationID),
              \(event.seq), \(millis))
            ON CONFLICT (user_id, conversation_id) DO UPDATE SET seq = excluded.seq, updated_ms = excluded.updated_ms
            WHERE read_cursors.seq < excluded.seq
            """,
            logger: logger
        )
        if let node = message.acceptingNode {
            try await connection.query(
                """
                INSERT INTO turns (run_id, conversation_id, stream_id, order_seq, backend, device_id, client_id, state, node_id, incarnation)
                VALUES (\(runID), \(message.conversationID), \(message.userID), \(event.seq), '', \(message.deviceID), \(message.clientID), 0,
                  \(node.node), \(node.incarnation))
                """,
                logger: logger
            )
        }
        try await PostgresQueueQueries.enqueue(
            connection,
            .message(event),
            stream: message.userID,
            seq: event.seq,
            targets: queue,
            at: millis,
            logger: logger
        )
        try await notify(connection, stream: message.userID, prev: last - 2, last: last, logger: logger)
        return .fresh(event, runID: runID, answer: answer)
    }

    /// `CoreJournal.finish`: the answer as event `eventID`; refused (`TurnFenced`) when the message
    /// is no longer active (failed meanwhile, or its node was declared dead).
    static func finish(
        _ connection: PostgresConnection,
        turn: TurnRef,
        userID: String,
        conversationID: String,
        eventID: String,
        content: String,
        at millis: Int64,
        queue: [QueueTarget],
        logger: Logger
    ) async throws -> ChatEvent {
        try await refuseUnlessActive(connection, turn, logger: logger)
        let seq = try await takeSeqs(connection, stream: userID, count: 1, logger: logger)
        let event = ChatEvent(
            id: eventID,
            seq: seq,
            userID: userID,
            conversationID: conversationID,
            role: .assistant,
            content: content,
            timestampMillis: millis,
            deviceID: nil,
            attachmentsJSON: nil,
            turn: turn
        )
        try await insert(connection, event, kind: 0, role: 1, runID: turn.runID, logger: logger)
        try await connection.query(
            "UPDATE messages SET state = 0, answer_event_id = \(eventID) WHERE device_id = \(turn.deviceID) AND client_id = \(turn.clientID)",
            logger: logger
        )
        try await release(connection, turn, logger: logger)
        try await PostgresQueueQueries.enqueue(connection, .message(event), stream: userID, seq: seq, targets: queue, at: millis, logger: logger)
        try await notify(connection, stream: userID, prev: seq - 1, last: seq, logger: logger)
        return event
    }

    /// `CoreJournal.note`: an assistant event no turn owns.
    static func note(
        _ connection: PostgresConnection,
        userID: String,
        conversationID: String,
        content: String,
        at millis: Int64,
        queue: [QueueTarget],
        logger: Logger
    ) async throws -> ChatEvent {
        let seq = try await takeSeqs(connection, stream: userID, count: 1, logger: logger)
        let event = ChatEvent(
            id: Identifiers.newEventID(),
            seq: seq,
            userID: userID,
            conversationID: conversationID,
            role: .assistant,
            content: content,
            timestampMillis: millis,
            deviceID: nil,
            attachmentsJSON: nil,
            isNote: true
        )
        try await insert(connection, event, kind: 0, role: 2, runID: nil, logger: logger)
        try await PostgresQueueQueries.enqueue(connection, .message(event), stream: userID, seq: seq, targets: queue, at: millis, logger: logger)
        try await notify(connection, stream: userID, prev: seq - 1, last: seq, logger: logger)
        return event
    }

    /// `CoreJournal.fail`: the failure event (kind 1) and the message's end; the seq it took.
    /// Refused (`TurnFenced`) when the message is no longer active.
    static func fail(_ connection: PostgresConnection, _ failure: TurnFailure, queue: [QueueTarget], logger: Logger) async throws -> Int64 {
        try await refuseUnlessActive(connection, failure.turn, logger: logger)
        let state: MessageState = failure.cause == .aborted ? .aborted : .failed
        let seq = try await takeSeqs(connection, stream: failure.userID, count: 1, logger: logger)
        try await connection.query(
            """
            INSERT INTO events (stream_id, seq, id, kind, conversation_id, content, run_id, created_ms)
            VALUES (\(failure.userID), \(seq), \("f_" + failure.turn.runID), 1, \(failure.conversationID), \(failure.reason),
              \(failure.turn.runID), \(failure.timestampMillis))
            """,
            logger: logger
        )
        try await connection.query(
            """
            UPDATE messages SET state = \(Int16(state.rawValue)), reason = \(failure.reason), ended_seq = \(seq), ended_ms = \(failure.timestampMillis),
              answer_event_id = coalesce(\(failure.answerID), answer_event_id)
            WHERE device_id = \(failure.turn.deviceID) AND client_id = \(failure.turn.clientID)
            """,
            logger: logger
        )
        try await connection.query(
            "UPDATE conversations SET updated_ms = \(failure.timestampMillis) WHERE id = \(failure.conversationID)",
            logger: logger
        )
        try await release(connection, failure.turn, logger: logger)
        try await PostgresQueueQueries.enqueue(
            connection,
            .failure(failure),
            stream: failure.userID,
            seq: seq,
            targets: queue,
            at: failure.timestampMillis,
            logger: logger
        )
        try await notify(connection, stream: failure.userID, prev: seq - 1, last: seq, logger: logger)
        return seq
    }

    /// A single node's start: turns cannot survive a restart, so every active message fails
    /// ("the relay restarted") at a fresh seq of its stream, as a failure event; returns them.
    /// A cluster node does not call this: a dead node's turns are failed by `relay_declare_dead`.
    static func failActive(_ connection: PostgresConnection, at millis: Int64, logger: Logger) async throws -> [MessageRecord] {
        let rows = try await connection.query(
            "SELECT device_id, client_id FROM messages WHERE state = 1 ORDER BY stream_id, answer_seq",
            logger: logger
        )
        var keys: [(String, String)] = []
        for try await key in rows.decode((String, String).self) { keys.append(key) }
        var failed: [MessageRecord] = []
        for (deviceID, clientID) in keys {
            guard let record = try await stored(connection, deviceID: deviceID, clientID: clientID, logger: logger) else { continue }
            let failure = TurnFailure(
                turn: TurnRef(runID: record.runID, deviceID: deviceID, clientID: clientID),
                conversationID: record.conversationID ?? "",
                userID: record.userID,
                cause: .failed,
                reason: "the relay restarted",
                timestampMillis: millis
            )
            _ = try await fail(connection, failure, queue: [], logger: logger)
            failed.append(record)
        }
        return failed
    }

    /// The stored message a device sent under `clientID`.
    static func stored(_ connection: PostgresConnection, deviceID: String, clientID: String, logger: Logger) async throws -> MessageRecord? {
        let rows = try await connection.query(
            """
            SELECT content_hash, attachments_hash, state, user_event_id, answer_event_id, run_id, reason, answer_seq, stream_id, conversation_id
            FROM messages WHERE device_id = \(deviceID) AND client_id = \(clientID)
            """,
            logger: logger
        )
        for try await row in rows.decode((String, String, Int16, String, String?, String, String?, Int64?, String, String).self) {
            let (contentHash, attachmentsHash, state, userEventID, answerID, runID, reason, answerSeq, streamID, conversationID) = row
            return MessageRecord(
                deviceID: deviceID,
                clientID: clientID,
                contentHash: contentHash,
                attachmentsHash: attachmentsHash,
                state: MessageState(rawValue: Int(state)) ?? .failed,
                userEventID: userEventID,
                assistantEventID: answerID,
                runID: runID,
                reason: reason,
                answerSeq: answerSeq,
                userID: streamID,
                conversationID: conversationID
            )
        }
        return nil
    }

    /// A write about a turn whose message exists and is no longer active is not this node's to make.
    private static func refuseUnlessActive(_ connection: PostgresConnection, _ turn: TurnRef, logger: Logger) async throws {
        let state = try await connection.first(
            "SELECT state FROM messages WHERE device_id = \(turn.deviceID) AND client_id = \(turn.clientID) FOR UPDATE",
            as: Int16.self,
            logger: logger
        )
        if let state, state != Int16(MessageState.active.rawValue) { throw TurnFenced(runID: turn.runID) }
    }

    /// The turn leaves the cluster's queue: its conversation's next turn may run.
    private static func release(_ connection: PostgresConnection, _ turn: TurnRef, logger: Logger) async throws {
        try await connection.query("DELETE FROM turns WHERE run_id = \(turn.runID)", logger: logger)
    }

    private static func insert(
        _ connection: PostgresConnection,
        _ event: ChatEvent,
        kind: Int16,
        role: Int16,
        runID: String?,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO events (stream_id, seq, id, kind, conversation_id, role, content, device_id, attachments, run_id, created_ms)
            VALUES (\(event.userID), \(event.seq), \(event.id), \(kind), \(event.conversationID), \(role), \(event.content), \(event.deviceID),
              \(event.attachmentsJSON), \(runID), \(event.timestampMillis))
            """,
            logger: logger
        )
    }

    /// Takes `count` seqs of the stream's clock; the new last.
    static func takeSeqs(_ connection: PostgresConnection, stream: String, count: Int32, logger: Logger) async throws -> Int64 {
        guard let last = try await connection.first("SELECT relay_take_seqs(\(stream), \(count))", as: Int64.self, logger: logger) else {
            throw PostgresStoreError(code: .rejected, message: "relay_take_seqs returned nothing (is the schema current?)")
        }
        return last
    }

    /// Announces `(prev, last]` of a stream to every node (delivered at commit).
    static func notify(_ connection: PostgresConnection, stream: String, prev: Int64, last: Int64, logger: Logger) async throws {
        try await connection.query("SELECT relay_notify(ARRAY[\(stream)], ARRAY[\(prev)], ARRAY[\(last)])", logger: logger)
    }
}
