import Foundation
import RelayCore
import Testing

@testable import RelayStore

/// A store in a fresh temporary directory, removed afterwards.
final class TemporaryStore {
    let directory: String
    let store: Store

    init() throws {
        directory = NSTemporaryDirectory() + "clawrelay-store-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        store = try Store(dataDirectory: directory, executor: nil)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

@Suite struct EventLogTests {
    func fill(_ store: Store, user: String, count: Int) throws -> [ChatEvent] {
        try store.write { db in
            try (0..<count).map { index in
                try EventQueries.append(
                    db,
                    userID: user,
                    conversationID: "main",
                    role: .user,
                    content: "m\(index)",
                    deviceID: "d",
                    attachmentsJSON: nil,
                    at: Int64(index)
                )
            }
        }
    }

    @Test func aConversationPagesBackFromTheNewestAndSaysWhenOlderEventsRemain() throws {
        let temp = try TemporaryStore()
        _ = try fill(temp.store, user: "u", count: 5)
        _ = try fill(temp.store, user: "someone else", count: 3)
        let page = { (skipping: Int, limit: Int, budget: Int) in
            try temp.store.read {
                try EventQueries.recent($0, userID: "u", conversationID: "main", skipping: skipping, limit: limit, byteBudget: budget)
            }
        }
        let newest = try page(0, 2, .max)
        #expect(newest.events.map(\.content) == ["m3", "m4"] && newest.hasMore)
        let older = try page(2, 2, .max)
        #expect(older.events.map(\.content) == ["m1", "m2"] && older.hasMore)
        let oldest = try page(4, 2, .max)
        #expect(oldest.events.map(\.content) == ["m0"] && !oldest.hasMore)
        #expect(try page(0, 5, .max).hasMore == false, "exactly all of them: nothing older")
        let bySize = try page(0, 5, 3)
        #expect(bySize.events.map(\.content) == ["m4"] && bySize.hasMore, "the newest always fits; the size bound leaves older ones out")
        #expect(try page(9, 5, .max) == RecentEvents(events: [], hasMore: false))
    }

    @Test func seqIsPerUserAndMonotonic() throws {
        let temp = try TemporaryStore()
        let a = try fill(temp.store, user: "a", count: 3)
        let b = try fill(temp.store, user: "b", count: 2)
        #expect(a.map(\.seq) == [1, 2, 3])
        #expect(b.map(\.seq) == [1, 2])
        #expect(Set((a + b).map(\.id)).count == 5)
    }

    @Test func replayAfterCursorKeepsTheNewestWithinTheCap() throws {
        let temp = try TemporaryStore()
        let events = try fill(temp.store, user: "u", count: 800)
        let window = try temp.store.read { try EventQueries.replay($0, audiences: ["u"], after: events[0].id, limit: 500) }
        #expect(window.events.count == 500)
        #expect(window.events.first?.content == "m300")
        #expect(window.events.last?.content == "m799")
        #expect(window.truncated)
        #expect(!window.historyReset)
        #expect(window.highWater == ["u": 800])
    }

    @Test func replayWithoutOrWithUnknownCursorIsTheTail() throws {
        let temp = try TemporaryStore()
        _ = try fill(temp.store, user: "u", count: 3)
        let none = try temp.store.read { try EventQueries.replay($0, audiences: ["u"], after: nil, limit: 500) }
        #expect(none.events.count == 3 && none.historyReset && !none.truncated)
        let unknown = try temp.store.read { try EventQueries.replay($0, audiences: ["u"], after: "s_nope", limit: 2) }
        #expect(unknown.events.map(\.content) == ["m1", "m2"] && unknown.historyReset && unknown.truncated)
        let latest = try temp.store.read { try EventQueries.replay($0, audiences: ["u"], after: none.events.last?.id, limit: 500) }
        #expect(latest.events.isEmpty && !latest.truncated && !latest.historyReset)
    }
}

extension EventLogTests {
    /// A user's history and a shared audience's, interleaved: replay merges them in the order
    /// they were stored, and a cursor from either history marks the same point in both.
    @Test func replayMergesAudiencesInStoredOrder() throws {
        let temp = try TemporaryStore()
        let order = ["u", "@admins", "u", "@admins", "@admins", "u"]
        let events = try temp.store.write { db in
            try order.enumerated().map { index, owner in
                try EventQueries.append(
                    db,
                    userID: owner,
                    conversationID: owner,
                    role: .user,
                    content: "\(owner)\(index)",
                    deviceID: "d",
                    attachmentsJSON: index == 3 ? #"[{"type":"asset","assetId":"a_x"}]"# : nil,
                    at: 1
                )
            }
        }
        let both = ["u", "@admins"]
        let all = try temp.store.read { try EventQueries.replay($0, audiences: both, after: nil, limit: 10) }
        #expect(all.events.map(\.content) == events.map(\.content))
        #expect(all.highWater == ["u": 3, "@admins": 3])
        let afterAdmin = try temp.store.read { try EventQueries.replay($0, audiences: both, after: events[1].id, limit: 10) }
        #expect(afterAdmin.events.map(\.content) == ["u2", "@admins3", "@admins4", "u5"] && !afterAdmin.historyReset)
        let capped = try temp.store.read { try EventQueries.replay($0, audiences: both, after: events[0].id, limit: 2) }
        #expect(capped.events.map(\.content) == ["@admins4", "u5"] && capped.truncated)
        // A user that does not hear the audience cannot use its events as a cursor.
        let own = try temp.store.read { try EventQueries.replay($0, audiences: ["u"], after: events[1].id, limit: 10) }
        #expect(own.historyReset && own.events.map(\.content) == ["u0", "u2", "u5"])
        #expect(try temp.store.read { try EventQueries.mentions($0, assetID: "a_x", audience: "@admins") })
        #expect(try !temp.store.read { try EventQueries.mentions($0, assetID: "a_x", audience: "u") })
        #expect(try !temp.store.read { try EventQueries.mentions($0, assetID: "a_", audience: "@admins") })
    }
}

@Suite struct MessageRecordTests {
    func accept(_ store: Store, id: String, content: String, queue: [QueueTarget] = []) throws -> Acceptance {
        try store.write { db in
            try MessageQueries.accept(
                db,
                UserMessage(conversationID: "cv_1", userID: "u", deviceID: "d", clientID: id, runID: "run-\(id)", content: content),
                at: 1,
                queue: queue
            )
        }
    }

    @Test func duplicatesAreDetectedByDeviceAndClientID() throws {
        let temp = try TemporaryStore()
        guard case .fresh(let event, let runID, let answer) = try accept(temp.store, id: "c_1", content: "hello") else {
            Issue.record("first accept was not fresh")
            return
        }
        #expect(event.role == .user && event.deviceID == "d" && runID == "run-c_1")
        #expect(answer.seq == event.seq + 1 && answer.id.hasPrefix("s_"))
        guard case .duplicate(.active, let again, let sameAnswer) = try accept(temp.store, id: "c_1", content: "hello") else {
            Issue.record("retry was not a duplicate")
            return
        }
        #expect(again == runID && sameAnswer == answer)
        guard case .mismatch = try accept(temp.store, id: "c_1", content: "other") else {
            Issue.record("other content was not a mismatch")
            return
        }
    }

    @Test func restartFailsActiveTurns() throws {
        let temp = try TemporaryStore()
        _ = try accept(temp.store, id: "c_1", content: "x")
        #expect(try temp.store.write { try MessageQueries.failActive($0, at: 1) }.map(\.clientID) == ["c_1"])
        let record = try temp.store.read { try MessageQueries.fetch($0, deviceID: "d", clientID: "c_1") }
        #expect(record?.state == .failed)
        #expect(record?.reason == "the relay restarted")
    }

    @Test func auditRedactsBeforeStoring() throws {
        let temp = try TemporaryStore()
        let log = try AuditLog(dataDirectory: temp.directory, retentionDays: 1, startWriter: true)
        log.append(
            AuditEntry(
                timeMillis: SystemClock().nowMillis(),
                connectionID: 7,
                protocolName: "clawline",
                direction: "in",
                kind: "ws",
                deviceID: "d",
                userID: nil,
                opcode: "text",
                size: 10,
                body: ""
            ),
            raw: Array(#"{"type":"auth","token":"supersecret"}"#.utf8)
        )
        log.close()
        let reader = try AuditLog(dataDirectory: temp.directory, retentionDays: 0, startWriter: false)
        let rows = try AuditQueries.fetch(reader, since: nil, deviceID: "d", protocolName: nil, afterID: 0, limit: 10)
        #expect(rows.count == 1)
        #expect(rows.first?.body.contains("supersecret") == false)
        #expect(rows.first?.body.contains("sha256:") == true)
    }

    @Test func onlyTheRelayStoresWriterKeepsALargePageCache() throws {
        let temp = try TemporaryStore()
        let log = try AuditLog(dataDirectory: temp.directory, retentionDays: 1, startWriter: false)
        // The audit log appends only: its writer keeps SQLite's default cache (2,000 KiB), so its
        // memory does not grow with every audit page written.
        let auditCache = try log.pool.write { try Int.fetchOne($0, sql: "PRAGMA cache_size") }
        #expect(auditCache == -2_000)
        let storeCache = try temp.store.write { try Int.fetchOne($0, sql: "PRAGMA cache_size") }
        #expect(storeCache == -65_536)
    }
}
