import Foundation
import PostgresNIO
import RelayCore
import Testing

@testable import RelayStorePostgres

/// Listings come in SQLite's byte order even where the database's locale sorts text otherwise.
@Suite(.timeLimit(.minutes(1))) struct PostgresListingOrderTests {
    @Test func listingsAreInByteOrderWhateverTheLocale() async throws {
        let fixture = try await JournalFixture()
        // As in a database made with a language's locale (ICU's root: "a" before "B").
        try await fixture.run { connection, logger in
            for statement in [
                #"ALTER TABLE devices ALTER COLUMN id TYPE text COLLATE "und-x-icu""#,
                #"ALTER TABLE accounts ALTER COLUMN name TYPE text COLLATE "und-x-icu""#,
                #"ALTER TABLE push_targets ALTER COLUMN device_id TYPE text COLLATE "und-x-icu""#,
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
        for id in ["a", "B"] {
            try await fixture.store(deviceRecord(id))
            try await awaiting { fixture.journal.savePushTarget(deviceID: id, kind: .apns, token: "t", platform: nil, at: 1, completion: $0) }
            fixture.journal.recordAccount(AccountStatus(name: id, kind: "clawline", state: "linked", detail: "", updatedAt: 1))
        }
        let devices = try await awaiting { fixture.journal.devices(protocolName: nil, completion: $0) }
        #expect(devices.map(\.id) == ["B", "a"])
        #expect(try await awaiting { fixture.journal.pushDevices(completion: $0) }.map(\.deviceID) == ["B", "a"])
        let accounts = try await fixture.run { connection, logger in try await PostgresAccountQueries.all(connection, logger: logger) }
        #expect(accounts.map(\.name) == ["B", "a"])
        await fixture.stop()
    }
}
