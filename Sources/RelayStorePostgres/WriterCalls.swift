import Logging
import PostgresNIO
import RelayCore

/// The batch calls (one function call per batch) and the key reads that settle a batch whose
/// connection dropped before its reply.
enum WriterCalls {
    static func accept(
        _ connection: PostgresConnection,
        _ requests: [AcceptRequest],
        _: NodeIncarnation,
        _ logger: Logger
    ) async throws
        -> [PostgresAcceptance]
    {
        let rows = try await connection.query(
            """
            SELECT * FROM relay_accept_batch(\(requests.map(\.streamID)), \(requests.map(\.conversationID)), \(requests.map(\.deviceID)),
              \(requests.map(\.clientID)), \(requests.map(\.runID)), \(requests.map(\.userEventID)), \(requests.map(\.answerEventID)),
              \(requests.map(\.content)), \(requests.map(\.contentHash)), \(requests.map { $0.attachmentsJSON ?? "" }),
              \(requests.map(\.attachmentsHash)), \(requests.map(\.backend)), \(requests.map { $0.node?.node ?? "" }),
              \(requests.map { $0.node?.incarnation.uuidString ?? "" }))
            """,
            logger: logger
        )
        let decoded = rows.decode((Int16, Int16?, String?, String?, String?, Int64?, Int64?).self)
        return try await collect(decoded, count: requests.count, from: "relay_accept_batch").enumerated().map { index, row in
            let (outcome, state, runID, userEventID, answerEventID, seq, answerSeq) = row
            let request = requests[index]
            switch outcome {
            case 0:
                guard let userEventID, let answerEventID, let seq, let answerSeq else { throw malformed("relay_accept_batch") }
                return fresh(request, userEventID: userEventID, answer: AnswerSlot(id: answerEventID, seq: answerSeq), userSeq: seq)
            case 1:
                let answer = answerEventID.map { AnswerSlot(id: $0, seq: answerSeq ?? 0) }
                return .duplicate(MessageState(rawValue: Int(state ?? 2)) ?? .failed, runID: runID ?? request.runID, answer: answer)
            default:
                return .mismatch
            }
        }
    }

    /// The stored message of each request: this attempt's own commit when its user event id is
    /// there (then it was fresh), otherwise judged as a duplicate or a mismatch; absent = unknown.
    static func resolveAccepts(
        _ connection: PostgresConnection,
        _ requests: [AcceptRequest],
        _: NodeIncarnation,
        _ logger: Logger
    ) async throws
        -> [Result<PostgresAcceptance, PostgresStoreError>]
    {
        let rows = try await connection.query(
            """
            SELECT m.device_id, m.client_id, m.run_id, m.user_event_id, m.answer_event_id, m.answer_seq, m.content_hash,
              m.attachments_hash, m.state
            FROM messages m JOIN unnest(\(requests.map(\.deviceID))::text[], \(requests.map(\.clientID))::text[]) AS k(d, c)
              ON m.device_id = k.d AND m.client_id = k.c
            """,
            logger: logger
        )
        var stored: [String: (run: String, event: String, answer: String?, answerSeq: Int64?, hashes: [String], state: Int16)] = [:]
        for try await (device, client, run, event, answer, answerSeq, contentHash, attachmentsHash, state) in rows.decode(
            (String, String, String, String, String?, Int64?, String, String, Int16).self
        ) {
            stored[device + "\u{0}" + client] = (run, event, answer, answerSeq, [contentHash, attachmentsHash], state)
        }
        return requests.map { request in
            guard let row = stored[request.deviceID + "\u{0}" + request.clientID] else {
                return .failure(
                    PostgresStoreError(code: .connectionLost, message: "the connection was lost before the accept was known to be stored; retry it")
                )
            }
            if row.event == request.userEventID, let answer = row.answer, let answerSeq = row.answerSeq {
                return .success(fresh(request, userEventID: row.event, answer: AnswerSlot(id: answer, seq: answerSeq), userSeq: answerSeq - 1))
            }
            guard row.hashes == [request.contentHash, request.attachmentsHash] else { return .success(.mismatch) }
            let answer = row.answer.map { AnswerSlot(id: $0, seq: row.answerSeq ?? 0) }
            return .success(.duplicate(MessageState(rawValue: Int(row.state)) ?? .failed, runID: row.run, answer: answer))
        }
    }

    static func claim(
        _ connection: PostgresConnection,
        _ conversations: [String],
        _ node: NodeIncarnation,
        _ logger: Logger
    ) async throws
        -> [ClaimResult]
    {
        let rows = try await connection.query(
            "SELECT o_run, o_order_seq FROM relay_claim_batch(\(conversations), \(node.node), \(node.incarnation))",
            logger: logger
        )
        let decoded = try await collect(rows.decode((String?, Int64?).self), count: conversations.count, from: "relay_claim_batch")
        return decoded.map { run, order in
            guard let run, let order else { return .notClaimed }
            return .claimed(runID: run, orderSeq: order)
        }
    }

    /// A claim that committed shows as the conversation's running turn on this incarnation.
    static func resolveClaims(
        _ connection: PostgresConnection,
        _ conversations: [String],
        _ node: NodeIncarnation,
        _ logger: Logger
    ) async throws
        -> [Result<ClaimResult, PostgresStoreError>]
    {
        let rows = try await connection.query(
            "SELECT conversation_id, run_id, order_seq FROM turns WHERE conversation_id = ANY(\(conversations)) AND state = 1 AND incarnation = \(node.incarnation)",
            logger: logger
        )
        var running: [String: ClaimResult] = [:]
        for try await (conversation, run, order) in rows.decode((String, String, Int64).self) {
            running[conversation] = .claimed(runID: run, orderSeq: order)
        }
        return conversations.map { conversation in
            running[conversation].map { .success($0) }
                ?? .failure(
                    PostgresStoreError(code: .connectionLost, message: "the connection was lost before the claim was known to be stored; claim again")
                )
        }
    }

    static func end(_ connection: PostgresConnection, _ ends: [TurnEnding], _ node: NodeIncarnation, _ logger: Logger) async throws -> [FencedWrite] {
        let rows = try await connection.query(
            """
            SELECT o_stream, o_seq FROM relay_end_batch(\(ends.map(\.runID)), \(ends.map(\.state)), \(ends.map(\.eventID)), \(ends.map(\.text)),
              \(node.incarnation))
            """,
            logger: logger
        )
        let decoded = try await collect(rows.decode((String?, Int64?).self), count: ends.count, from: "relay_end_batch")
        return decoded.map { stream, seq in
            guard let stream, let seq else { return .refused }
            return .done(StreamPosition(stream: stream, prev: seq - 1, last: seq))
        }
    }

    /// A turn this incarnation ended shows in an ended state with its event's seq; one still
    /// running here is unknown (the old session may yet commit); anything else was refused.
    static func resolveEnds(
        _ connection: PostgresConnection,
        _ ends: [TurnEnding],
        _ node: NodeIncarnation,
        _ logger: Logger
    ) async throws
        -> [Result<FencedWrite, PostgresStoreError>]
    {
        let runs = ends.map(\.runID)
        let rows = try await connection.query(
            """
            SELECT t.run_id, t.state, coalesce(t.incarnation = \(node.incarnation), false), t.stream_id, m.ended_seq
            FROM turns t LEFT JOIN messages m ON m.run_id = t.run_id WHERE t.run_id = ANY(\(runs))
            """,
            logger: logger
        )
        var turns: [String: (state: Int16, mine: Bool, stream: String, seq: Int64?)] = [:]
        for try await (run, state, mine, stream, seq) in rows.decode((String, Int16, Bool, String, Int64?).self) {
            turns[run] = (state, mine, stream, seq)
        }
        return ends.map { end in
            guard let turn = turns[end.runID], turn.mine else { return .success(.refused) }
            if turn.state == end.state, let seq = turn.seq {
                return .success(.done(StreamPosition(stream: turn.stream, prev: seq - 1, last: seq)))
            }
            if turn.state == 1 {
                return .failure(
                    PostgresStoreError(code: .connectionLost, message: "the connection was lost before the turn's end was known to be stored; retry")
                )
            }
            return .success(.refused)
        }
    }

    private static func fresh(_ request: AcceptRequest, userEventID: String, answer: AnswerSlot, userSeq: Int64) -> PostgresAcceptance {
        let position = StreamPosition(stream: request.streamID, prev: answer.seq - 2, last: answer.seq)
        return .fresh(runID: request.runID, userEventID: userEventID, userSeq: userSeq, answer: answer, position: position)
    }

    /// A batch function's rows: one per argument, in order.
    private static func collect<Rows: AsyncSequence>(_ rows: Rows, count: Int, from function: String) async throws -> [Rows.Element] {
        var collected: [Rows.Element] = []
        for try await row in rows { collected.append(row) }
        guard collected.count == count else { throw malformed(function) }
        return collected
    }

    private static func malformed(_ function: String) -> PostgresStoreError {
        PostgresStoreError(code: .rejected, message: "\(function) returned rows that do not match its arguments (is the schema current?)")
    }
}
