import Foundation
import GRDB
import RelayCore
import RelayStore
import Testing

@testable import RelayStorePostgres

/// `SQLiteToPostgres` past one batch, and a value SQLite holds in the wrong type.
@Suite(.timeLimit(.minutes(2))) struct SQLiteToPostgresBatchTests {
    @Test func aLogLongerThanABatchIsCopiedWhole() async throws {
        let sqlite = try SQLiteToPostgresTests.SQLiteRelay()
        let notes = 2_345
        for index in 1...notes {
            sqlite.journal.note(userID: "u1", conversationID: "c1", content: "note \(index)", now: Int64(index), queue: []) { _ in }
        }
        await awaitingDone { sqlite.journal.barrier($0) }
        let database = try await TestDatabase(migrate: false)
        let counts = try await sqlite.copy(into: database)
        #expect(counts.first { $0.table == "events" }?.rows == notes)
        #expect(try await database.integers("SELECT count(*) FROM events") == [Int64(notes)])
        let copied = try await database.strings("SELECT string_agg(seq || ':' || content || ':' || created_ms, ',' ORDER BY seq) FROM events")
        let written = (1...notes).map { "\($0):note \($0):\($0)" }.joined(separator: ",")
        #expect(copied == [written], "every note at its seq, with its text and time")
    }

    @Test func serialIDsGoOnAfterTheCopiedOnes() async throws {
        let sqlite = try SQLiteToPostgresTests.SQLiteRelay()
        for millis: Int64 in [1, 2] {
            _ = try sqlite.store.write { try OperatorQueries.enqueue($0, action: .revoke, deviceID: "d1", userID: "u1", at: millis) }
        }
        let database = try await TestDatabase(migrate: false)
        _ = try await sqlite.copy(into: database)
        let next = try await database.withConnection { connection in
            try await PostgresControlQueries.enqueue(connection, action: .approve, deviceID: "d2", userID: nil, at: 3, logger: database.logger)
        }
        #expect(next == 3)
        #expect(try await database.strings("SELECT string_agg(id || action, ' ' ORDER BY id) FROM operator_commands") == ["1revoke 2revoke 3approve"])
    }

    /// A schema whose queue entries point at the log and keep no copy of the item.
    /// A queue entry points at its event in the log, expiring when it would have on SQLite.
    @Test func queueEntriesPointAtTheirEvents() async throws {
        let sqlite = try SQLiteToPostgresTests.SQLiteRelay()
        _ = try await SQLiteToPostgresTests.fill(sqlite.journal)
        let database = try await TestDatabase()
        let counts = try await sqlite.copy(into: database)
        #expect(counts.first { $0.table == "queue_entries" }?.rows == 3)
        let entries = try await database.strings("SELECT device_id || ' ' || seq || ' ' || expires_ms FROM queue_entries ORDER BY seq")
        let events = try await database.integers("SELECT seq FROM events WHERE stream_id = 'u1' AND (role = 1 OR kind = 1 OR seq = 2) ORDER BY seq")
        #expect(entries == zip(events, [62_000, 63_000, 63_700]).map { "d2 \($0) \($1)" }, "\(entries) \(events)")
    }

    @Test func aValueOfTheWrongTypeIsRefusedNamingItsColumnAndNothingIsCopied() async throws {
        let sqlite = try SQLiteToPostgresTests.SQLiteRelay()
        _ = try await SQLiteToPostgresTests.fill(sqlite.journal)
        try sqlite.store.write { try $0.execute(sql: "UPDATE push_targets SET created_at = 'yesterday'") }
        let database = try await TestDatabase(migrate: false)
        let refused = await #expect(throws: PostgresStoreError.self) { try await sqlite.copy(into: database) }
        #expect(refused?.message == "push_targets.created_ms holds \"yesterday\" in SQLite, which is no bigint", "\(String(describing: refused))")
        #expect(try await database.integers("SELECT count(*) FROM devices") == [0], "the devices copied before it were rolled back")
        // The database stays empty: a fixed store copies into it.
        try sqlite.store.write { try $0.execute(sql: "UPDATE push_targets SET created_at = 5000") }
        _ = try await sqlite.copy(into: database)
        #expect(try await database.integers("SELECT count(*) FROM devices") == [1])
    }
}
