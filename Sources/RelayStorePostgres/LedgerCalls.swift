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
        var dead = DeadNodeTurns(failed: [], adopted: [])
        let decoded = rows.decode((Int16, String, String, String, String, String, Int64, String?, Int64?, String?, String?, String?).self)
        for try await (kind, run, stream, conversation, device, client, seq, answerID, answerSeq, content, attachments, hash) in decoded {
            let turn = TurnRef(runID: run, deviceID: device, clientID: client)
            if kind == 0 {
                let failure = TurnFailure(
                    turn: turn,
                    conversationID: conversation,
                    userID: stream,
                    cause: .failed,
                    reason: request.reason,
                    timestampMillis: request.now,
                    answerID: answerID
                )
                dead.failed.append((failure, seq))
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
            dead.adopted.append(AdoptedTurn(message: message, runID: run, answer: AnswerSlot(id: answerID ?? "", seq: answerSeq ?? 0)))
        }
        return dead
    }

    private static func malformed(_ function: String) -> PostgresStoreError {
        PostgresStoreError(code: .rejected, message: "\(function) returned rows that do not match its arguments (is the schema current?)")
    }
}
