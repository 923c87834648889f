import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

@Suite(.timeLimit(.minutes(1))) struct PostgresJournalTests {
    /// Operations run in submission order and report in that order; a barrier reports after every
    /// write submitted before it.
    @Test func completionsArriveInSubmissionOrder() async throws {
        let fixture = try await JournalFixture()
        let order = Recorder<Int>()
        for index in 0..<20 {
            fixture.journal.perform(
                "step \(index)",
                { connection, logger in
                    try await connection.query("SELECT 1", logger: logger)
                    return index
                },
                completion: { result in if case .success(let value) = result { order.append(value) } }
            )
        }
        await awaitingDone { fixture.journal.barrier($0) }
        #expect(order.all == Array(0..<20))
        await fixture.stop()
    }

    /// A statement the database refuses fails its own operation with `.rejected` (the message
    /// names what it was doing) and leaves the next one unharmed; a failed transaction leaves
    /// nothing behind.
    @Test func aRefusedStatementFailsOnlyItsOperation() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        await #expect(throws: PostgresStoreError.self) {
            try await awaiting { completion in
                journal.performTransaction(
                    "store two rows",
                    { connection, logger in
                        try await connection.query("INSERT INTO streams (stream_id, last) VALUES ('s', 1)", logger: logger)
                        try await connection.query("INSERT INTO streams (stream_id, last) VALUES ('s', 2)", logger: logger)
                    },
                    completion: completion
                )
            }
        }
        let count = try await awaiting { completion in
            journal.perform(
                "count streams",
                { connection, logger in
                    var count: Int64 = 0
                    for try await value in try await connection.query("SELECT count(*) FROM streams", logger: logger).decode(Int64.self) {
                        count = value
                    }
                    return count
                },
                completion: completion
            )
        }
        #expect(count == 0, "the transaction was rolled back")
        await fixture.stop()
    }
}
