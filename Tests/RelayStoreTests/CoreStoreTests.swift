import Foundation
import GRDB
import RelayCore
import Testing

@testable import RelayStore

@Suite struct ConversationStoreTests {
    @Test func aKeyResolvesToOneConversationAndExtraKeysNameItToo() throws {
        let temp = try TemporaryStore()
        let draft = ConversationDraft(
            title: "app",
            backend: "echo",
            workingDirectory: "/srv/app",
            extraKeys: [ConversationKey("companion.dir", "/srv/app")]
        )
        let first = try temp.store.write {
            try ConversationQueries.resolve($0, key: ConversationKey("companion", "s1"), userID: "u", draft: draft, at: 5)
        }
        let again = try temp.store.write {
            try ConversationQueries.resolve($0, key: ConversationKey("companion.dir", "/srv/app"), userID: "u", draft: ConversationDraft(), at: 9)
        }
        #expect(first == again)
        #expect(Set(first.keys) == [ConversationKey("companion", "s1"), ConversationKey("companion.dir", "/srv/app")])
        #expect(first.workingDirectory == "/srv/app" && first.backend == "echo" && first.createdAt == 5)
        let other = try temp.store.write {
            try ConversationQueries.resolve($0, key: ConversationKey("companion", "s1"), userID: "someone else", draft: draft, at: 5)
        }
        #expect(other.id != first.id, "keys are per user")
    }

    @Test func aBackendSessionIsStoredWithItsConversationAndCanBeForgotten() throws {
        let temp = try TemporaryStore()
        let conversation = try temp.store.write { try ConversationQueries.resolve($0, key: .main, userID: "u", draft: ConversationDraft(), at: 1) }
        #expect(conversation.backendSession == nil)
        try temp.store.write { try ConversationQueries.setBackendSession($0, "sess-1", conversationID: conversation.id) }
        #expect(try temp.store.read { try ConversationQueries.fetch($0, id: conversation.id) }?.backendSession == "sess-1")
        let again = try temp.store.write { try ConversationQueries.resolve($0, key: .main, userID: "u", draft: ConversationDraft(), at: 2) }
        #expect(again.backendSession == "sess-1", "a resolved conversation carries its backend session")
        try temp.store.write { try ConversationQueries.setBackendSession($0, nil, conversationID: conversation.id) }
        #expect(try temp.store.read { try ConversationQueries.fetch($0, id: conversation.id) }?.backendSession == nil)
    }

    @Test func settingsAreStoredWithTheirConversationAndNullMeansNoneSet() throws {
        let temp = try TemporaryStore()
        var settings = ConversationSettings()
        settings.category = "Work"
        let draft = ConversationDraft(settings: settings)
        let conversation = try temp.store.write { try ConversationQueries.resolve($0, key: .session("s"), userID: "u", draft: draft, at: 1) }
        #expect(conversation.settings.category == "Work")
        let edit = ConversationEdit.all([.configure(.thinkingLevel("high")), .configure(.fastMode(.auto)), .configure(.pinned(true))])
        let edited = try #require(
            try temp.store.write { db in try ConversationQueries.update(db, id: conversation.id) { edit.apply(to: &$0, at: 7) } }
        )
        #expect(edited.settings.pinnedAt == 7 && edited.updatedAt == 7)
        let read = try #require(try temp.store.read { try ConversationQueries.fetch($0, id: conversation.id) })
        #expect(read.settings == edited.settings && read.settings.thinkingLevel == "high" && read.settings.fastMode == .auto)
        let cleared = ConversationEdit.all([
            .configure(.thinkingLevel(nil)), .configure(.fastMode(nil)), .configure(.pinned(false)), .configure(.category(nil)),
        ])
        _ = try temp.store.write { db in try ConversationQueries.update(db, id: conversation.id) { cleared.apply(to: &$0, at: 9) } }
        #expect(try temp.store.read { try $0.value(String.self, "SELECT settings FROM conversations WHERE id = ?", [conversation.id]) } == nil)
        #expect(try temp.store.read { try ConversationQueries.fetch($0, id: conversation.id) }?.settings == ConversationSettings())
    }

    @Test func theCoreMigrationTurnsStoredNamesIntoConversations() throws {
        let directory = NSTemporaryDirectory() + "clawrelay-migration-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/relay.sqlite"
        let queue = try DatabaseQueue(path: path)
        try Migrations.relay().migrate(queue, upTo: "v4-pair-links")
        try queue.write { db in
            for (seq, name) in [(1, "main"), (2, "main"), (3, "backend:cmd:x")] {
                try db.execute(
                    sql: "INSERT INTO events (user_id, seq, id, conversation, role, content, created_at) VALUES ('u', ?, ?, ?, 'user', 'hi', ?)",
                    arguments: [seq, "s_\(seq)", name, seq * 10]
                )
            }
        }
        try Migrations.relay().migrate(queue)
        try queue.read { db in
            let main = try #require(try ConversationQueries.conversationID(db, key: .main, userID: "u"))
            let pinned = try #require(try ConversationQueries.conversationID(db, key: .session("backend:cmd:x"), userID: "u"))
            #expect(try ConversationQueries.fetch(db, id: pinned)?.backend == "cmd")
            #expect(try ConversationQueries.fetch(db, id: main)?.updatedAt == 20)
            #expect(try EventQueries.count(db, conversationID: main) == 2)
            #expect(try EventQueries.conversation(db, userID: "u", conversationID: pinned, limit: 10).map(\.id) == ["s_3"])
        }
    }

    @Test func deletingAConversationDeletesItsMessageRecordsAndNoOthers() throws {
        let temp = try TemporaryStore()
        let (doomed, kept) = try temp.store.write { db in
            (
                try ConversationQueries.resolve(db, key: .session("doomed"), userID: "u", draft: ConversationDraft(), at: 1),
                try ConversationQueries.resolve(db, key: .session("kept"), userID: "u", draft: ConversationDraft(), at: 1)
            )
        }
        try temp.store.write { db in
            for (index, conversation) in [doomed, kept, doomed].enumerated() {
                _ = try MessageQueries.accept(
                    db,
                    UserMessage(conversationID: conversation.id, userID: "u", deviceID: "phone", clientID: "c\(index)", content: "x"),
                    at: 1,
                    queue: []
                )
            }
        }
        #expect(try temp.store.write { try ConversationQueries.delete($0, id: doomed.id) })
        let left = try temp.store.read { try String.fetchAll($0, sql: "SELECT client_id FROM messages ORDER BY client_id") }
        #expect(left == ["c1"])
        #expect(try temp.store.read { try MessageQueries.fetch($0, deviceID: "phone", clientID: "c1") }?.conversationID == kept.id)
    }

    @Test func theLeanWritesMigrationKeepsEveryMessageRecord() throws {
        let directory = NSTemporaryDirectory() + "clawrelay-migration-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let queue = try DatabaseQueue(path: directory + "/relay.sqlite")
        try Migrations.relay().migrate(queue, upTo: "v10-read-cursors")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO messages (device_id, client_id, user_id, content_hash, attachments_hash, streaming, ack_sent, user_event_id,
                                          created_at, conversation_id, run_id, assistant_event_id, answer_seq)
                    VALUES ('phone', 'c1', 'u', 'h', 'a', 0, 1, 's_1', 5, 'cv', 'run-1', 's_2', 2)
                    """
            )
        }
        try Migrations.relay().migrate(queue)
        try queue.read { db in
            let record = try #require(try MessageQueries.fetch(db, deviceID: "phone", clientID: "c1"))
            #expect(record.state == .finalized && record.runID == "run-1" && record.answer == AnswerSlot(id: "s_2", seq: 2))
            #expect(try db.columns(in: "messages").map(\.name).contains("ack_sent") == false)
            let indexes = try String.fetchAll(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('messages', 'conversations')"
            )
            #expect(!indexes.contains("messages_conversation"))
            #expect(try db.indexes(on: "conversations").first { $0.name == "conversations_user" }?.columns == ["user_id"])
        }
    }
}

@Suite struct QueueStoreTests {
    let target = QueueTarget(deviceID: "tablet", ttlMillis: 1_000, capacity: 3)

    func event(_ content: String) -> QueueItem {
        .message(
            ChatEvent(
                id: "s_\(content)",
                seq: 1,
                userID: "u",
                conversationID: "cv",
                role: .assistant,
                content: content,
                timestampMillis: 7,
                deviceID: nil,
                attachmentsJSON: nil,
                turn: TurnRef(runID: "r", deviceID: "tablet", clientID: "req-9")
            )
        )
    }

    @Test func entriesComeBackInOrderWithTheirTurnAndAreCappedAndExpire() throws {
        let temp = try TemporaryStore()
        try temp.store.write { db in
            for content in ["a", "b", "c", "d"] { try QueueQueries.enqueue(db, event(content), targets: [target], at: 100) }
        }
        let pending = try temp.store.read { try QueueQueries.pending($0, deviceID: "tablet", at: 500) }
        #expect(pending.map(\.item) == ["b", "c", "d"].map(event), "the oldest is dropped past capacity; the turn survives the round trip")
        #expect(pending.allSatisfy { $0.queuedAt == 100 })
        #expect(try temp.store.read { try QueueQueries.pending($0, deviceID: "tablet", conversations: ["cv"], at: 500) }.count == 3)
        #expect(try temp.store.read { try QueueQueries.pending($0, deviceID: "tablet", conversations: ["elsewhere"], at: 500) }.isEmpty)
        #expect(try temp.store.read { try QueueQueries.pending($0, deviceID: "tablet", at: 1_100) }.isEmpty, "expired")
        try temp.store.write { try QueueQueries.delete($0, deviceID: "tablet", ids: [pending[0].id, pending[1].id]) }
        #expect(try temp.store.read { try QueueQueries.depths($0, at: 500) } == ["tablet": 1])
        #expect(try temp.store.write { try QueueQueries.purge($0, at: 1_100) } == 2, "the one left expired, and the one past capacity goes")
        #expect(try temp.store.write { try QueueQueries.purge($0, at: 1_100) } == 0, "a purge moves the floor past what it dropped")
        #expect(try temp.store.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM queue_items") } == 0)
    }

    @Test func queuedEventsKeepTheTurnThatProducedThem() throws {
        let temp = try TemporaryStore()
        let turn = TurnRef(runID: "run-1", deviceID: "tablet", clientID: "cmd:R")
        try temp.store.write { db in
            _ = try MessageQueries.accept(
                db,
                UserMessage(conversationID: "cv", userID: "u", deviceID: "tablet", clientID: "cmd:R", runID: "run-1", content: "x"),
                at: 1,
                queue: [target]
            )
            _ = try MessageQueries.finalize(db, turn: turn, userID: "u", conversationID: "cv", eventID: "s_a", content: "y", at: 2, queue: [target])
        }
        let turns: [TurnRef?] = try temp.store.read { try QueueQueries.pending($0, deviceID: "tablet", at: 5) }.map {
            if case .message(let event) = $0.item { event.turn } else { nil }
        }
        #expect(turns == [turn, turn])
    }

    @Test func aFailedTurnIsRecordedAndQueuedInOneTransaction() throws {
        let temp = try TemporaryStore()
        try temp.store.write { db in
            _ = try MessageQueries.accept(
                db,
                UserMessage(conversationID: "cv", userID: "u", deviceID: "tablet", clientID: "req-1", content: "x"),
                at: 1,
                queue: []
            )
            try MessageQueries.fail(
                db,
                TurnFailure(
                    turn: TurnRef(runID: "r", deviceID: "tablet", clientID: "req-1"),
                    conversationID: "cv",
                    userID: "u",
                    cause: .aborted,
                    reason: "stop",
                    timestampMillis: 3
                ),
                queue: [target]
            )
        }
        #expect(try temp.store.read { try MessageQueries.fetch($0, deviceID: "tablet", clientID: "req-1") }?.state == .aborted)
        guard case .failure(let failure)? = try temp.store.read({ try QueueQueries.pending($0, deviceID: "tablet", at: 5) }).first?.item else {
            Issue.record("no failure queued")
            return
        }
        #expect(failure.reason == "stop")
    }
}
