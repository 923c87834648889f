import Foundation
import GRDB
import RelayCore
import Testing

@testable import RelayStore

/// Queues read by cursor from the history (issue 26): the write path names the devices in the
/// event's row, a delivery writes one row per item, and a purge moves floors.
@Suite struct QueueCursorTests {
    let tablet = QueueTarget(deviceID: "tablet", ttlMillis: 10_000, capacity: 100)

    func send(_ db: Database, _ id: String, queue: [QueueTarget], at millis: Int64, statements: WriterStatements? = nil) throws -> ChatEvent {
        let message = UserMessage(conversationID: "cv", userID: "u", deviceID: "phone", clientID: id, content: id)
        guard
            case .fresh(let event, _, _) = try MessageQueries.accept(
                db,
                message,
                at: millis,
                queue: queue,
                statements: statements ?? WriterStatements(db)
            )
        else { throw StoreError("not accepted") }
        return event
    }

    @Test func aQueuedEventCostsItsOwnRowAndEachDeliveryIsHandedOutOnce() throws {
        let temp = try TemporaryStore()
        let (first, second) = try temp.store.write { db in
            let statements = WriterStatements(db)
            return (
                try send(db, "c1", queue: [tablet], at: 100, statements: statements),
                try send(db, "c2", queue: [tablet], at: 200, statements: statements)
            )
        }
        #expect(try temp.store.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM queue_sources") } == 1, "one floor per device and log")
        var pending = try temp.store.read { try QueueQueries.pending($0, deviceID: "tablet", at: 300) }
        #expect(pending.map(\.item) == [.message(first), .message(second)], "in order, with their turns")
        try temp.store.write { try QueueQueries.delete($0, deviceID: "tablet", ids: [pending[0].id]) }
        pending = try temp.store.read { try QueueQueries.pending($0, deviceID: "tablet", at: 300) }
        #expect(pending.map(\.item) == [.message(second)], "handed out once")

        #expect(try temp.store.write { try QueueQueries.purge($0, at: 300) } == 0)
        #expect(try temp.store.read { try QueueQueries.pending($0, deviceID: "tablet", at: 300) }.map(\.item) == [.message(second)])
        let floor = try temp.store.read { try Int64.fetchOne($0, sql: "SELECT from_seq FROM queue_sources WHERE device_id = 'tablet'") }
        #expect(floor == second.seq, "the floor passed what was handed out")
        #expect(try temp.store.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM queue_delivered") } == 0, "and forgot its delivery")
        #expect(try temp.store.read { try QueueQueries.pending($0, deviceID: "tablet", at: 10_200) }.isEmpty, "expired")
    }

    @Test func anEventQueuedLateIsSeenEvenBehindAFloorAPurgeMoved() throws {
        let temp = try TemporaryStore()
        let (early, late) = try temp.store.write { db in
            (try send(db, "c1", queue: [], at: 100), try send(db, "c2", queue: [tablet], at: 200))
        }
        _ = try temp.store.write { try QueueQueries.purge($0, at: 300) }
        try temp.store.write { try QueueQueries.enqueue($0, .message(early), targets: [tablet], at: 300) }
        let pending = try temp.store.read { try QueueQueries.pending($0, deviceID: "tablet", at: 400) }
        #expect(pending.map(\.item) == [.message(early), .message(late)])
    }

    @Test func theQueueMigrationKeepsEveryEntryWithItsPlaceAndTurn() throws {
        let directory = NSTemporaryDirectory() + "clawrelay-migration-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let queue = try DatabaseQueue(path: directory + "/relay.sqlite")
        try Migrations.relay().migrate(queue, upTo: "v14-lean-log")
        let turn = TurnRef(runID: "run-1", deviceID: "phone", clientID: "c:1")
        let stored = ChatEvent(
            id: "s_1",
            seq: 1,
            userID: "u",
            conversationID: "cv",
            role: .assistant,
            content: "answer",
            timestampMillis: 50,
            deviceID: nil,
            attachmentsJSON: nil,
            turn: turn
        )
        let failure = TurnFailure(turn: turn, conversationID: "cv", userID: "u", cause: .failed, reason: "boom", timestampMillis: 60)
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO user_seqs (user_id, last) VALUES ('u', 2);
                    INSERT INTO events (user_id, seq, id, conversation, role, content, created_at) VALUES ('u', 1, 's_1', 'cv', 'assistant', 'answer', 50);
                    """
            )
            for (device, item, at) in [
                ("tablet", QueueItem.message(stored), Int64(50)), ("watch", .message(stored), 50), ("tablet", .failure(failure), 60),
            ] {
                try db.execute(
                    sql: "INSERT INTO notification_queue (device_id, conversation_id, item, queued_at, expires_at) VALUES (?, 'cv', ?, ?, ?)",
                    arguments: [device, String(decoding: try JSONEncoder().encode(item), as: UTF8.self), at, at + 5_000]
                )
            }
        }
        try Migrations.relay().migrate(queue)
        let (gone, tablet, watch, expired, named) = try queue.read { db in
            (
                try db.tableExists("notification_queue") == false,
                try QueueQueries.pending(db, deviceID: "tablet", at: 100).map(\.item),
                try QueueQueries.pending(db, deviceID: "watch", at: 100).map(\.item),
                try QueueQueries.pending(db, deviceID: "watch", at: 5_050),
                try String.fetchOne(db, sql: "SELECT queued_for FROM events WHERE id = 's_1'")
            )
        }
        #expect(gone)
        #expect(tablet == [.message(stored), .failure(failure)])
        #expect(watch == [.message(stored)])
        #expect(expired.isEmpty, "the time to live came along")
        #expect(named == QueueQueries.deviceList(["tablet", "watch"]))
    }
}
