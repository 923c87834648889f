import RelayCore
import Testing

@Suite struct IdentifiersTests {
    @Test func newUUIDsAreDistinctLowercaseVersion4() {
        let ids = (0..<1_000).map { _ in Identifiers.newUUID() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy(Identifiers.isUUIDv4))
        #expect(ids.allSatisfy { $0 == $0.lowercased() })
    }

    @Test func orderedUUIDsCarryTheTimeAndSortByIt() {
        let early = Identifiers.newOrderedUUID(nowMillis: 1_700_000_000_000)
        let later = Identifiers.newOrderedUUID(nowMillis: 1_700_000_000_001)
        let much = Identifiers.newOrderedUUID(nowMillis: 1_800_000_000_000)
        #expect(early < later && later < much)
        // 1_700_000_000_000 = 0x018b_cfe5_6800: the first 48 bits, then version 7 and the RFC 4122 variant.
        #expect(early.hasPrefix("018bcfe5-6800-7"))
        let variant = early[early.index(early.startIndex, offsetBy: 19)]
        #expect("89ab".contains(variant))
        #expect(early.count == 36 && early.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
        let sameMillisecond = (0..<100).map { _ in Identifiers.newOrderedUUID(nowMillis: 1_700_000_000_000) }
        #expect(Set(sameMillisecond).count == 100, "random bits keep ids of one millisecond apart")
    }

    @Test func eventIDsAreServerIDsOfTheOrderedKind() {
        let id = Identifiers.newEventID()
        #expect(id.hasPrefix("s_") && id.count == 38)
        #expect(id.dropFirst(2).dropFirst(14).first == "7")
    }
}
