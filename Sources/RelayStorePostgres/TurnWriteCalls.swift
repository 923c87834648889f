import Logging
import PostgresNIO
import RelayCore

/// A batch of turn writes as one call of `relay_turn_writes`: one round trip, one transaction.
enum TurnWriteCalls {
    static func write(_ connection: PostgresConnection, _ writes: [TurnWrite], _: NodeIncarnation, _ logger: Logger) async throws -> [TurnWriteRow] {
        try await write(connection, writes, logger: logger)
    }

    static func write(_ connection: PostgresConnection, _ writes: [TurnWrite], logger: Logger) async throws -> [TurnWriteRow] {
        guard !writes.isEmpty else { return [] }
        var assetOps: [Int32] = []
        var assets: [String] = []
        var queueOps: [Int32] = []
        var queueDevices: [String] = []
        var queueTTLs: [Int64] = []
        var queueCapacities: [Int64] = []
        for (index, write) in writes.enumerated() {
            let op = Int32(index + 1)
            for asset in write.assetIDs {
                assetOps.append(op)
                assets.append(asset)
            }
            for target in write.queue {
                queueOps.append(op)
                queueDevices.append(target.deviceID)
                queueTTLs.append(target.ttlMillis)
                queueCapacities.append(Int64(target.capacity))
            }
        }
        let rows = try await connection.query(
            """
            SELECT * FROM relay_turn_writes(\(writes.map(\.kind.rawValue)), \(writes.map(\.stream)), \(writes.map(\.conversationID)),
              \(writes.map(\.deviceID)), \(writes.map(\.clientID)), \(writes.map(\.runID)), \(writes.map(\.eventID)),
              \(writes.map(\.answerEventID)), \(writes.map(\.content)), \(writes.map(\.contentHash)), \(writes.map { $0.attachmentsJSON ?? "" }),
              \(writes.map(\.attachmentsHash)), \(writes.map(\.senderID)), \(writes.map(\.rejected)),
              \(writes.map { Int16($0.endedState.rawValue) }), \(writes.map(\.millis)), \(writes.map { $0.node?.node ?? "" }),
              \(writes.map { $0.node?.incarnation.uuidString ?? "" }), \(assetOps), \(assets), \(queueOps), \(queueDevices), \(queueTTLs),
              \(queueCapacities), \(writes.map(\.backend)))
            """,
            logger: logger
        )
        var results: [TurnWriteRow] = []
        for try await (outcome, state, run, event, answer, seq, answerSeq) in rows.decode(
            (Int16, Int16?, String?, String?, String?, Int64?, Int64?).self
        ) {
            guard let outcome = TurnWriteRow.Outcome(rawValue: outcome) else { throw malformed }
            results.append(
                TurnWriteRow(outcome: outcome, state: state, runID: run, eventID: event, answerEventID: answer, seq: seq, answerSeq: answerSeq)
            )
        }
        guard results.count == writes.count else { throw malformed }
        return results
    }

    /// A batch whose connection dropped before its reply may or may not have committed: each write
    /// fails with `.connectionLost` and its caller decides (an accept is safe to send again: the
    /// same client id comes back as a duplicate).
    static func unknown(
        _: PostgresConnection,
        _ writes: [TurnWrite],
        _: NodeIncarnation,
        _: Logger
    ) async throws -> [Result<TurnWriteRow, PostgresStoreError>] {
        writes.map { write in
            .failure(
                PostgresStoreError(
                    code: .connectionLost,
                    message: "the connection to PostgreSQL was lost during a \(write.kind) write and its outcome is unknown; retry"
                )
            )
        }
    }

    private static let malformed = PostgresStoreError(
        code: .rejected,
        message: "relay_turn_writes returned rows that do not match its arguments (is the schema current?)"
    )
}
