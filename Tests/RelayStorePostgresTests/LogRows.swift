import Foundation
import Logging
import PostgresNIO
import RelayCore

/// Writes rows of the log with plain SQL, as `PostgresSchema+Journal.swift` documents them (the
/// message writes are another piece's work). Each call is one autocommitted statement on a
/// connection of its own (closed however it ends, so a failing test does not trap on an open
/// one), so rows written by separate calls have separate transaction times.
struct LogRows {
    let database: TestDatabase

    init(_ database: TestDatabase) { self.database = database }

    /// A user's message as a fresh accept leaves it: its event at a new seq, the answer's slot at
    /// the next one, and an active message record.
    struct Sent {
        var eventID: String
        var seq: Int64
        var runID: String
        var answerID: String
        var answerSeq: Int64
    }

    @discardableResult
    func userMessage(
        _ stream: String,
        _ conversation: String,
        device: String = "d1",
        client: String,
        content: String = "question",
        attachments: String? = nil,
        at millis: Int64 = 1_000
    ) async throws -> Sent {
        let sent = Sent(eventID: "ev_u_\(client)", seq: 0, runID: "run_\(client)", answerID: "ev_a_\(client)", answerSeq: 0)
        let last = try await seq(
            """
            WITH s AS (SELECT relay_take_seqs(\(stream), 2) AS last),
            e AS (INSERT INTO events (stream_id, seq, id, kind, conversation_id, role, content, device_id, attachments, run_id, created_ms)
              SELECT \(stream), last - 1, \(sent.eventID), 0, \(conversation), 0, \(content), \(device), \(attachments), \(sent.runID), \(millis)
              FROM s),
            m AS (INSERT INTO messages (device_id, client_id, stream_id, conversation_id, run_id, content_hash, attachments_hash, state,
                user_event_id, answer_event_id, answer_seq, created_ms)
              SELECT \(device), \(client), \(stream), \(conversation), \(sent.runID), 'h', '', 1, \(sent.eventID), \(sent.answerID), last, \(millis)
              FROM s)
            SELECT last FROM s
            """
        )
        return Sent(eventID: sent.eventID, seq: last - 1, runID: sent.runID, answerID: sent.answerID, answerSeq: last)
    }

    /// The answer to `sent` as a finish stores it (its record gets `ended_seq` too, as the turn
    /// functions write it); returns its seq.
    @discardableResult
    func answer(
        _ stream: String,
        _ conversation: String,
        to sent: Sent,
        content: String = "answer",
        at millis: Int64 = 2_000
    ) async throws
        -> Int64
    {
        try await seq(
            """
            WITH s AS (SELECT relay_take_seqs(\(stream), 1) AS last),
            e AS (INSERT INTO events (stream_id, seq, id, kind, conversation_id, role, content, run_id, created_ms)
              SELECT \(stream), last, \(sent.answerID), 0, \(conversation), 1, \(content), \(sent.runID), \(millis) FROM s),
            m AS (UPDATE messages SET state = 0, ended_seq = (SELECT last FROM s) WHERE run_id = \(sent.runID))
            SELECT last FROM s
            """
        )
    }

    /// The turn of `sent` ended without an answer (failed, or aborted); returns the failure's seq.
    @discardableResult
    func failure(
        _ stream: String,
        _ conversation: String,
        of sent: Sent,
        reason: String,
        aborted: Bool = false,
        at millis: Int64 = 3_000
    )
        async throws -> Int64
    {
        try await seq(
            """
            WITH s AS (SELECT relay_take_seqs(\(stream), 1) AS last),
            e AS (INSERT INTO events (stream_id, seq, id, kind, conversation_id, content, run_id, created_ms)
              SELECT \(stream), last, 'f_' || \(sent.runID), 1, \(conversation), \(reason), \(sent.runID), \(millis) FROM s),
            m AS (UPDATE messages SET state = \(aborted ? 3 : 2), reason = \(reason), ended_seq = (SELECT last FROM s), ended_ms = \(millis)
              WHERE run_id = \(sent.runID))
            SELECT last FROM s
            """
        )
    }

    /// A relay note (an assistant event no turn owns); returns its seq.
    @discardableResult
    func note(_ stream: String, _ conversation: String, id: String, content: String = "note", at millis: Int64 = 4_000) async throws -> Int64 {
        try await seq(
            """
            WITH s AS (SELECT relay_take_seqs(\(stream), 1) AS last),
            e AS (INSERT INTO events (stream_id, seq, id, kind, conversation_id, role, content, created_ms)
              SELECT \(stream), last, \(id), 0, \(conversation), 2, \(content), \(millis) FROM s)
            SELECT last FROM s
            """
        )
    }

    /// Runs a statement that returns one seq.
    func seq(_ query: PostgresQuery) async throws -> Int64 {
        try await database.column(query, as: Int64.self, applicationName: "log-rows").last ?? 0
    }
}
