import Foundation
import RelayCore
import Testing

@testable import RelayStore

/// What the CLI reads: ids typed by an operator (`IDLookup`), and the newest rows of the audit and
/// of the push attempts.
@Suite struct IDLookupTests {
    func storeWithDevices() throws -> TemporaryStore {
        let temp = try TemporaryStore()
        try temp.store.write { db in
            for id in ["aaaaaaaa-1111", "aaaaaaaa-2222", "bbbbbbbb-1111", "phone"] {
                try DeviceQueries.insert(db, DeviceJournalStoreTests.record(id))
            }
            try OperatorQueries.upsertPending(
                db,
                PendingPairing(deviceID: "cccccccc-9999", claimedName: nil, deviceInfoJSON: nil, createdAt: 1, expiresAt: 2)
            )
        }
        return temp
    }

    func resolve(_ temp: TemporaryStore, _ given: String, as kind: IDLookup.Kind = .device) throws -> String {
        try temp.store.read { db in try IDLookup.resolve(db, given, as: kind) }
    }

    /// The sentence a refused id gets ("" when it was not refused).
    func refusal(_ temp: TemporaryStore, _ given: String) throws -> String {
        do {
            _ = try resolve(temp, given)
            return ""
        } catch let error as IDLookupError {
            return error.description
        }
    }

    @Test func aWholeIdOrAUniquePrefixOfEightNamesOneDevice() throws {
        let temp = try storeWithDevices()
        #expect(try resolve(temp, "aaaaaaaa-1111") == "aaaaaaaa-1111")
        #expect(try resolve(temp, "bbbbbbbb") == "bbbbbbbb-1111")
        #expect(try resolve(temp, "aaaaaaaa-2") == "aaaaaaaa-2222")
        #expect(try resolve(temp, "phone") == "phone", "a whole id shorter than a prefix")
        #expect(try resolve(temp, "cccccccc") == "cccccccc-9999", "a pending request's id")
        #expect(try resolve(temp, "dddddddd-0000") == "dddddddd-0000", "unknown: the command says so")
    }

    @Test func anAmbiguousPrefixIsRefusedNamingTheMatches() throws {
        let error = try refusal(try storeWithDevices(), "aaaaaaaa")
        #expect(error.contains("aaaaaaaa-1111") && error.contains("aaaaaaaa-2222") && error.contains("more than one device"), "\(error)")
    }

    @Test func aPrefixShorterThanEightIsRefusedSayingSo() throws {
        let error = try refusal(try storeWithDevices(), "bbbb")
        #expect(error.contains("at least 8 characters"), "\(error)")
    }

    @Test func conversationsResolveTheSameWay() throws {
        let temp = try TemporaryStore()
        let id = try temp.store.write { db in
            try ConversationQueries.resolve(db, key: .main, userID: "u", draft: ConversationDraft(), at: 1).id
        }
        #expect(try resolve(temp, String(id.prefix(10)), as: .conversation) == id)
        #expect(try resolve(temp, id, as: .conversation) == id)
    }
}

@Suite struct NewestRowsTests {
    @Test func theAuditGivesTheNewestRowsOldestFirst() throws {
        let temp = try TemporaryStore()
        let log = try AuditLog(dataDirectory: temp.directory, retentionDays: 0, startWriter: true)
        for index in 0..<10 {
            let entry = AuditEntry(
                timeMillis: Int64(index),
                connectionID: 1,
                protocolName: index.isMultiple(of: 2) ? "discoclaw" : "clawline",
                direction: "in",
                kind: "ws",
                deviceID: index.isMultiple(of: 2) ? "dddddddd-\(index)" : "short",
                userID: nil,
                opcode: "text",
                size: 1,
                body: ""
            )
            log.append(entry, raw: Array("row \(index)".utf8))
        }
        log.close()
        let reader = try AuditLog(dataDirectory: temp.directory, retentionDays: 0, startWriter: false)
        func times(newest: Bool, limit: Int, device: String? = nil, protocolName: String? = nil) throws -> [Int64] {
            try AuditQueries.fetch(reader, since: nil, deviceID: device, protocolName: protocolName, afterID: 0, limit: limit, newest: newest)
                .map(\.timeMillis)
        }
        #expect(try times(newest: true, limit: 3) == [7, 8, 9])
        #expect(try times(newest: false, limit: 3) == [0, 1, 2])
        #expect(try times(newest: true, limit: 2, protocolName: "discoclaw") == [6, 8])
        #expect(try times(newest: true, limit: 10, device: "dddddddd") == [0, 2, 4, 6, 8], "a prefix of 8")
        #expect(try times(newest: true, limit: 10, device: "short") == [1, 3, 5, 7, 9], "a whole short id")
        #expect(try times(newest: true, limit: 10, device: "sho") == [], "a short prefix matches nothing")
    }

    @Test func pushAttemptsGiveTheNewestOldestFirst() throws {
        let temp = try TemporaryStore()
        let attempts = (0..<5).map { index in
            PushAttempt(
                timeMillis: Int64(index),
                deviceID: "dddddddd-1",
                conversationID: "c",
                sink: "ntfy",
                target: "t",
                status: 200,
                outcome: .sent,
                reason: ""
            )
        }
        try temp.store.write { db in try PushTargetQueries.record(db, attempts, userID: nil) }
        let newest = try temp.store.read { db in
            try PushTargetQueries.attempts(db, since: nil, deviceID: "dddddddd", afterID: 0, limit: 2, newest: true)
        }
        #expect(newest.map(\.attempt.timeMillis) == [3, 4])
    }
}
