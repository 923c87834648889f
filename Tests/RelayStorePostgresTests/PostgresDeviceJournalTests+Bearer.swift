import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

extension PostgresDeviceJournalTests {
    /// A cluster node's read of a device paired through another node, by its bearer token's hash.
    @Test func aDeviceIsFoundByItsTokenHashWithinItsProtocol() async throws {
        let fixture = try await JournalFixture()
        var phone = deviceRecord("phone", protocolName: "discoclaw")
        phone.tokenHash = "hash-phone"
        try await fixture.store(phone)
        var other = deviceRecord("laptop", protocolName: "clawline")
        other.tokenHash = "hash-laptop"
        try await fixture.store(other)
        let found = try await awaiting { fixture.journal.device(tokenHash: "hash-phone", protocolName: "discoclaw", completion: $0) }
        #expect(found == phone)
        let elsewhere = try await awaiting { fixture.journal.device(tokenHash: "hash-laptop", protocolName: "discoclaw", completion: $0) }
        #expect(elsewhere == nil, "another protocol's token is not this one's")
        let unknown = try await awaiting { fixture.journal.device(tokenHash: "nope", protocolName: "discoclaw", completion: $0) }
        #expect(unknown == nil)
        await fixture.stop()
    }
}
