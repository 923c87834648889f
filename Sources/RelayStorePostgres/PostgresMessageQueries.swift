import Foundation
import Logging
import PostgresNIO
import RelayCore

/// The message records (`messages`), a single node's start-up failing of active turns, and the
/// stream clock: seqs come from `relay_take_seqs` (whose row lock makes seq order commit order)
/// and writes announce what they moved with `relay_notify`. The turn writes themselves are one
/// `relay_turn_writes` call per batch (`TurnWriteCalls`).
enum PostgresMessageQueries {
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
        var writes: [TurnWrite] = []
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
            writes.append(.failure(failure, queue: []))
            failed.append(record)
        }
        _ = try await TurnWriteCalls.write(connection, writes, logger: logger)
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

    /// Takes `count` seqs of the stream's clock; the new last.
    static func takeSeqs(_ connection: PostgresConnection, stream: String, count: Int32, logger: Logger) async throws -> Int64 {
        guard let last = try await connection.first("SELECT relay_take_seqs(\(stream), \(count))", as: Int64.self, logger: logger) else {
            throw PostgresStoreError(code: .rejected, message: "relay_take_seqs returned nothing for \(stream) (is the schema current?)")
        }
        return last
    }

    /// Announces `(prev, last]` of a stream to every node (delivered at commit).
    static func notify(_ connection: PostgresConnection, stream: String, prev: Int64, last: Int64, logger: Logger) async throws {
        try await connection.query("SELECT relay_notify(ARRAY[\(stream)], ARRAY[\(prev)], ARRAY[\(last)])", logger: logger)
    }
}
