import Foundation
import Logging
import PostgresNIO
import RelayCore

/// A node incarnation to declare dead (`relay_declare_dead`).
struct DeadNodeRequest: Sendable {
    var node: NodeIncarnation
    var survivor: NodeIncarnation
    var reason: String
    /// When, for the failures' timestamps.
    var now: Int64
}

/// The ledger's batch calls: withdrawals one function call per batch; each declaration of a dead
/// node its own call (its own transaction). Claims go with the turn writes (`TurnWriteCalls`).
enum LedgerCalls {
    static func withdraw(_ connection: PostgresConnection, _ runs: [String], _: NodeIncarnation, _ logger: Logger) async throws -> [Bool] {
        let rows = try await connection.query("SELECT o_removed FROM relay_withdraw_runs(\(runs))", logger: logger)
        var removed: [Bool] = []
        for try await value in rows.decode(Bool.self) { removed.append(value) }
        guard removed.count == runs.count else { throw malformed("relay_withdraw_runs") }
        return removed
    }

    static func declareDead(
        _ connection: PostgresConnection,
        _ requests: [DeadNodeRequest],
        _: NodeIncarnation,
        _ logger: Logger
    )
        async throws -> [DeadNodeTurns]
    {
        var results: [DeadNodeTurns] = []
        for request in requests { results.append(try await declareDead(connection, request, logger)) }
        return results
    }

    /// For calls that can be asked again: a lost reply is settled by calling again.
    static func again<Request: Sendable, Value: Sendable>(
        _ call: @escaping WriterSession.Call<Request, Value>
    )
        -> WriterSession.Resolve<Request, Value>
    {
        { connection, requests, node, logger in try await call(connection, requests, node, logger).map { .success($0) } }
    }

    /// A declaration whose reply was lost cannot be read back (a second call finds nothing left to
    /// do): the caller hears that the outcome is unknown.
    static func unknownDeclaration(
        _: PostgresConnection,
        _ requests: [DeadNodeRequest],
        _: NodeIncarnation,
        _: Logger
    ) async throws
        -> [Result<DeadNodeTurns, PostgresStoreError>]
    {
        requests.map { request in
            .failure(
                PostgresStoreError(
                    code: .connectionLost,
                    message: "the connection was lost while declaring \(request.node) dead; whether it was is unknown (its turns are in the log)"
                )
            )
        }
    }

    private static func declareDead(_ connection: PostgresConnection, _ request: DeadNodeRequest, _ logger: Logger) async throws -> DeadNodeTurns {
        let rows = try await connection.query(
            """
            SELECT * FROM relay_declare_dead(\(request.node.node), \(request.node.incarnation), \(request.survivor.node),
              \(request.survivor.incarnation), \(request.reason))
            """,
            logger: logger
        )
        return try await turns(rows, reason: request.reason, now: request.now)
    }

    /// Hands a run this node owns to the node holding its account (`relay_hand_over`).
    static func handOver(
        _ connection: PostgresConnection,
        runID: String,
        from: NodeIncarnation,
        to holder: NodeIncarnation,
        backend: String,
        logger: Logger
    ) async throws -> HandOver {
        let query: PostgresQuery = "SELECT relay_hand_over(\(runID), \(from.incarnation), \(holder.node), \(holder.incarnation), \(backend))"
        let code = try await connection.first(query, as: Int16.self, logger: logger)
        guard let code, let outcome = HandOver(rawValue: Int(code)) else { throw malformed("relay_hand_over") }
        return outcome
    }

    /// The runs handed to `node` that still wait, oldest first (`relay_handed_runs`).
    static func handed(_ connection: PostgresConnection, to node: NodeIncarnation, logger: Logger) async throws -> [AdoptedTurn] {
        let rows = try await connection.query("SELECT * FROM relay_handed_runs(\(node.incarnation))", logger: logger)
        return try await turns(rows, reason: "", now: 0).adopted
    }

    /// The rows of `relay_declare_dead` and `relay_handed_runs`: kind 0 a failed turn (with
    /// `reason` and `now`) at the seq its failure took, kind 1 a waiting turn as its stored message
    /// holds it, with the backend kept on its turn ('' for the conversation's own).
    private static func turns(_ rows: PostgresRowSequence, reason: String, now: Int64) async throws -> DeadNodeTurns {
        var turns = DeadNodeTurns(failed: [], adopted: [])
        let decoded = rows.decode((Int16, String, String, String, String, String, Int64, String?, Int64?, String?, String?, String?, String?).self)
        for try await (kind, run, stream, conversation, device, client, seq, answerID, answerSeq, content, attachments, hash, backend) in decoded {
            let turn = TurnRef(runID: run, deviceID: device, clientID: client)
            if kind == 0 {
                let failure = TurnFailure(
                    turn: turn,
                    conversationID: conversation,
                    userID: stream,
                    cause: .failed,
                    reason: reason,
                    timestampMillis: now,
                    answerID: answerID
                )
                turns.failed.append((failure, seq))
                continue
            }
            let message = UserMessage(
                conversationID: conversation,
                userID: stream,
                deviceID: device,
                clientID: client,
                runID: run,
                content: content ?? "",
                attachmentsJSON: attachments,
                attachmentsHash: hash ?? ""
            )
            let answer = AnswerSlot(id: answerID ?? "", seq: answerSeq ?? 0)
            turns.adopted.append(AdoptedTurn(message: message, runID: run, answer: answer, backend: backend.flatMap { $0.isEmpty ? nil : $0 }))
        }
        return turns
    }

    private static func malformed(_ function: String) -> PostgresStoreError {
        PostgresStoreError(code: .rejected, message: "\(function) returned rows that do not match its arguments (is the schema current?)")
    }
}
