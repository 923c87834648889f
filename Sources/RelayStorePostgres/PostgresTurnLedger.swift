import Logging
import RelayCore

/// The cluster's turn queue in PostgreSQL (`TurnLedger`, with `MemoryJournal`'s semantics): turns
/// are registered by the accept that stores their message (`UserMessage.acceptingNode`), claimed
/// one run at a time (`relay_claim_runs`, inside the writer's `relay_turn_writes` calls), given
/// back (`relay_withdraw_runs`), handed to the node holding their account (`relay_hand_over`)
/// and taken from a dead node (`relay_declare_dead`), each through the node's `PostgresWriter`,
/// in submission order. Finishing
/// and failing stay the writer's fenced `end`.
///
/// - Important: call on the loop; completions run where the writer runs its completions (the loop).
public final class PostgresTurnLedger: TurnLedger, Sendable {
    private let writer: PostgresWriter
    private let logger: Logger

    public init(writer: PostgresWriter, logger: Logger) {
        self.writer = writer
        self.logger = logger
    }

    /// A claim goes out with the turn writes queued beside it (one `relay_turn_writes` call), and
    /// sees what they wrote: the answer that ended the conversation's previous turn, an accept.
    public func claim(runID: String, conversationID: String, node: NodeIncarnation, completion: @escaping (Result<TurnClaim, any Error>) -> Void) {
        let done = onLoop(completion)
        writer.write(.claim(runID: runID, conversationID: conversationID, node: node)) { result in
            done(
                result.mapError { $0 as any Error }.flatMap { row in
                    switch (row.outcome, row.state) {
                    case (.claim, 0): .success(.running)
                    case (.claim, 1): .success(.waiting)
                    // Ended elsewhere, or this node was declared dead: it runs nothing more (TurnLedger: `.ended`).
                    case (.claim, 2), (.claim, 3): .success(.ended)
                    default:
                        .failure(PostgresStoreError(code: .rejected, message: "relay_turn_writes answered a claim with \(row.outcome)"))
                    }
                }
            )
        }
    }

    public func withdraw(runID: String) {
        let logger = logger
        writer.submit(
            .withdraw(runID: runID) { result in
                if case .failure(let error) = result {
                    logger.warning("postgres: could not withdraw a turn", metadata: ["run": "\(runID)", "error": "\(error)"])
                }
            }
        )
    }

    public func declareDead(
        _ node: NodeIncarnation,
        survivor: NodeIncarnation,
        reason: String,
        now: Int64,
        completion: @escaping (Result<DeadNodeTurns, any Error>) -> Void
    ) {
        let done = onLoop(completion)
        writer.submit(
            .declareDead(DeadNodeRequest(node: node, survivor: survivor, reason: reason, now: now)) { done($0.mapError { $0 as any Error }) }
        )
    }

    /// On the writer, in order with the claim that made the turn this node's.
    public func handOver(
        runID: String,
        from: NodeIncarnation,
        to holder: NodeIncarnation,
        backend: String,
        completion: @escaping (Result<HandOver, any Error>) -> Void
    ) {
        writer.perform(
            .reporting(
                "hand a turn over",
                on: writer.executor,
                { connection, logger in
                    try await LedgerCalls.handOver(connection, runID: runID, from: from, to: holder, backend: backend, logger: logger)
                },
                completion: completion
            )
        )
    }

    public func handedTurns(to node: NodeIncarnation, completion: @escaping (Result<[AdoptedTurn], any Error>) -> Void) {
        writer.perform(
            .reporting(
                "read the turns handed to this node",
                on: writer.executor,
                { connection, logger in
                    try await LedgerCalls.handed(connection, to: node, logger: logger)
                },
                completion: completion
            )
        )
    }

    /// `completion` as the writer's completion: the writer already runs it on the loop.
    private func onLoop<Value: Sendable>(_ completion: @escaping (Result<Value, any Error>) -> Void) -> @Sendable (Result<Value, any Error>) -> Void {
        let bound = LoopBound(completion, loop: writer.executor)
        return { result in bound.value(result) }
    }
}
