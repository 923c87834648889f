import Logging
import RelayTesting
import Testing

@testable import RelayCore

@Suite struct BearerIndexTests {
    func device(_ id: String, name: String = "phone", seen: Int64? = nil) -> DeviceRecord { .bearer(id, name: name, seen: seen) }

    func index() -> BearerIndex {
        var index = BearerIndex(limits: BearerIndex.Limits(missMillis: 1_000, maxMisses: 4, maxLookups: 2))
        index.index(protocol: "discoclaw")
        return index
    }

    @Test func aRefreshReadBeforeALocalChangeDoesNotUndoIt() {
        var index = index()
        let since = index.version
        index.put(device("d1"))
        // The read began before the pairing: it does not have the device.
        let first = index.replace(protocolName: "discoclaw", with: [], since: since)
        #expect(first.removed.isEmpty && index.record(tokenHash: "hash-d1")?.id == "d1")
        index.settled(since: since)
        // A read that began after it, and still has no such device: it was revoked elsewhere.
        let second = index.replace(protocolName: "discoclaw", with: [], since: index.version)
        #expect(second.removed == ["d1"] && index.record(tokenHash: "hash-d1") == nil)
    }

    @Test func aRefreshReportsJoinedAndRenamedDevicesButNotSightings() {
        var index = index()
        index.put(device("d1", seen: 5))
        let joined = index.replace(protocolName: "discoclaw", with: [device("d1", seen: 3), device("d2")], since: index.version)
        #expect(joined.changed.map(\.id) == ["d2"] && joined.removed.isEmpty)
        #expect(index.record(tokenHash: "hash-d1")?.lastSeenAt == 5, "the newer sighting stays")
        let renamed = index.replace(protocolName: "discoclaw", with: [device("d1", name: "new"), device("d2")], since: index.version)
        #expect(renamed.changed.map(\.claimedName) == ["new"])
    }

    /// Distinct unknown tokens at once: at most `maxLookups` reads; the rest are refused unread.
    @Test func readsOfUnknownTokensInFlightAreBounded() {
        let loop = ManualLoop()
        let journal = MemoryJournal(loop: loop, clock: loop.clock)
        let limits = BearerIndex.Limits(missMillis: 1_000, maxMisses: 4, maxLookups: 2)
        let devices = Devices(
            journal: journal,
            loop: loop,
            clock: loop.clock,
            logger: Logger(label: "test"),
            seenFlushMillis: 1_000,
            shared: true,
            bearerLimits: limits
        )
        devices.indexBearerTokens(of: "discoclaw")
        var refusedAtOnce: [Int] = []
        for number in 0..<3 {
            devices.bearer(tokenHash: "bad-\(number)", protocolName: "discoclaw") { _ in refusedAtOnce.append(number) }
        }
        #expect(refusedAtOnce == [2] && journal.tokenReads == 2)
        loop.runUntilIdle()
        devices.bearer(tokenHash: "bad-2", protocolName: "discoclaw") { _ in }
        #expect(journal.tokenReads == 3, "read once the others ended")
    }

    @Test func missesAreBoundedAndExpire() {
        var index = index()
        for number in 0..<9 { index.rememberMiss("bad-\(number)", now: Int64(number)) }
        #expect(index.missCount <= 4)
        #expect(index.isKnownMiss("bad-8", now: 10))
        #expect(!index.isKnownMiss("bad-8", now: 1_008))
        index.put(device("d1"))
        index.rememberMiss("hash-d2", now: 0)
        _ = index.replace(protocolName: "discoclaw", with: [device("d2")], since: index.version)
        #expect(!index.isKnownMiss("hash-d2", now: 1), "a device indexed since is no miss")
    }
}
