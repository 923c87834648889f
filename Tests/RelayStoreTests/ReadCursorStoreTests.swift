import Foundation
import GRDB
import RelayCore
import Testing

@testable import RelayStore

@Suite struct ReadCursorStoreTests {
    /// A conversation of user `u` with the given (role, text) events, oldest first.
    func conversation(_ temp: TemporaryStore, _ key: String, _ events: [(ChatRole, String)]) throws -> (Conversation, [ChatEvent]) {
        try temp.store.write { db in
            let conversation = try ConversationQueries.resolve(db, key: .session(key), userID: "u", draft: ConversationDraft(), at: 1)
            let stored = try events.enumerated().map { index, event in
                try EventQueries.append(
                    db,
                    userID: "u",
                    conversationID: conversation.id,
                    role: event.0,
                    content: event.1,
                    deviceID: event.0 == .user ? "d" : nil,
                    attachmentsJSON: nil,
                    at: Int64(10 + index)
                )
            }
            return (conversation, stored)
        }
    }

    func markRead(_ temp: TemporaryStore, _ conversation: Conversation, _ seq: Int64, at millis: Int64 = 100) throws -> ReadCursor? {
        try temp.store.write { try ReadCursorQueries.markRead($0, userID: "u", conversationID: conversation.id, seq: seq, at: millis) }
    }

    func cursor(_ temp: TemporaryStore, _ conversation: Conversation, user: String = "u") throws -> ReadCursor? {
        try temp.store.read { try ReadCursorQueries.cursor($0, userID: user, conversationID: conversation.id) }
    }

    @Test func aCursorMovesOnlyForwardAndStopsAtTheNewestEvent() throws {
        let temp = try TemporaryStore()
        let (chat, events) = try conversation(temp, "main", [(.assistant, "a"), (.assistant, "b"), (.assistant, "c")])
        #expect(
            try markRead(temp, chat, events[1].seq, at: 100) == ReadCursor(userID: "u", conversationID: chat.id, seq: events[1].seq, updatedAt: 100)
        )
        #expect(try markRead(temp, chat, events[0].seq, at: 200) == nil, "backwards is no move")
        #expect(try markRead(temp, chat, events[1].seq, at: 300) == nil, "the same place is no move")
        #expect(try cursor(temp, chat)?.seq == events[1].seq && cursor(temp, chat)?.updatedAt == 100)
        #expect(try markRead(temp, chat, 10_000, at: 400)?.seq == events[2].seq, "past the newest event: clamped to it")
        #expect(try cursor(temp, chat, user: "someone else") == nil, "cursors are per user")

        let (empty, _) = try conversation(temp, "empty", [])
        #expect(try markRead(temp, empty, 5) == nil && cursor(temp, empty) == nil, "nothing to read in an empty conversation")
    }

    @Test func acceptingAMessageMovesItsSendersCursorToIt() throws {
        let temp = try TemporaryStore()
        let (chat, events) = try conversation(temp, "main", [(.assistant, "earlier answer")])
        let message = UserMessage(conversationID: chat.id, userID: "u", deviceID: "phone", clientID: "c1", content: "hi")
        guard case .fresh(let sent, _, _) = try temp.store.write({ try MessageQueries.accept($0, message, at: 50, queue: []) }) else {
            Issue.record("not accepted")
            return
        }
        #expect(sent.seq > events[0].seq)
        #expect(try cursor(temp, chat)?.seq == sent.seq, "a message one wrote is read, and so is what came before it")
    }

    @Test func theOwnersCursorRowTrailsItsMessagesButReadsDoNot() throws {
        let temp = try TemporaryStore()
        let (chat, _) = try conversation(temp, "main", [(.assistant, "earlier answer")])
        let (first, second, shared, room) = try temp.store.write { db in
            let statements = WriterStatements(db)  // the writer's: it remembers its writes
            let room = try ConversationQueries.resolve(db, key: .session("room"), userID: "audience", draft: ConversationDraft(), at: 1)
            func send(_ id: String, to conversation: Conversation, from sender: String? = nil, at millis: Int64) throws -> ChatEvent {
                let message = UserMessage(
                    conversationID: conversation.id,
                    userID: conversation.userID,
                    senderID: sender,
                    deviceID: "phone",
                    clientID: id,
                    content: id
                )
                guard case .fresh(let event, _, _) = try MessageQueries.accept(db, message, at: millis, queue: [], statements: statements) else {
                    throw StoreError("not accepted")
                }
                return event
            }
            let first = try send("c1", to: chat, at: 1_000)
            let second = try send("c2", to: chat, at: 1_500)
            _ = try send("c3", to: room, from: "u", at: 1_600)
            return (first, second, try send("c4", to: room, from: "u", at: 1_700), room)
        }
        let row = try temp.store.read {
            try Int64.fetchOne($0, sql: "SELECT seq FROM read_cursors WHERE user_id = 'u' AND conversation_id = ?", arguments: [chat.id])
        }
        #expect(row == first.seq, "the second send within the lag is not written")
        #expect(try cursor(temp, chat)?.seq == second.seq, "but reads find it")
        #expect(try cursor(temp, room)?.seq == shared.seq, "a sender's cursor in an audience's conversation is written every time")
        let summary = try #require(try temp.store.read { try ReadCursorQueries.summary($0, conversationID: chat.id, userID: "u") })
        #expect(summary.unreadCount == 0 && summary.lastReadSeq == second.seq)
    }

    @Test func aSummaryCountsTheAnswersAfterTheCursor() throws {
        let temp = try TemporaryStore()
        let (chat, events) = try conversation(
            temp,
            "main",
            [(.user, "q1"), (.assistant, "a1"), (.user, "q2"), (.assistant, "a2"), (.assistant, "a3")]
        )
        var summary = try #require(try temp.store.read { try ReadCursorQueries.summary($0, conversationID: chat.id, userID: "u") })
        #expect(summary.unreadCount == 2 && summary.lastReadSeq == events[2].seq, "one's own message is read, and so is what came before it")
        #expect(summary.lastEvent?.content == "a3" && summary.messageCount == 5)

        #expect(try markRead(temp, chat, events[1].seq) == nil, "behind one's own message: no move")
        _ = try markRead(temp, chat, events[2].seq)
        summary = try #require(try temp.store.read { try ReadCursorQueries.summary($0, conversationID: chat.id, userID: "u") })
        #expect(summary.unreadCount == 2 && summary.lastReadSeq == events[2].seq)

        let (other, _) = try conversation(temp, "other", [(.user, "only me")])
        let all = try temp.store.read { try ReadCursorQueries.summaries($0, userID: "u", limit: 10) }
        #expect(Set(all.map(\.conversation.id)) == [chat.id, other.id])
        #expect(all.first { $0.conversation.id == other.id }?.unreadCount == 0)
        #expect(try temp.store.read { try ReadCursorQueries.summaries($0, userID: "u", limit: 1) }.count == 1, "bounded")
        #expect(try temp.store.read { try ReadCursorQueries.summary($0, conversationID: "cv_missing", userID: "u") } == nil)
    }

    @Test func deletingAConversationDeletesItsCursors() throws {
        let temp = try TemporaryStore()
        let (chat, events) = try conversation(temp, "main", [(.assistant, "a")])
        _ = try markRead(temp, chat, events[0].seq)
        #expect(try temp.store.write { try ConversationQueries.delete($0, id: chat.id) })
        #expect(try cursor(temp, chat) == nil)
    }

    @Test func theMigrationCountsHistoryStoredBeforeItAsRead() throws {
        let directory = NSTemporaryDirectory() + "clawrelay-cursors-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let queue = try DatabaseQueue(path: directory + "/relay.sqlite")
        try Migrations.relay().migrate(queue, upTo: "v9-backend-session")
        try queue.write { db in
            for (seq, conversation) in [(1, "cv_a"), (2, "cv_a"), (3, "cv_b")] {
                try db.execute(
                    sql: "INSERT INTO events (user_id, seq, id, conversation, role, content, created_at) VALUES ('u', ?, ?, ?, 'assistant', 'x', ?)",
                    arguments: [seq, "s_\(seq)", conversation, seq * 10]
                )
            }
        }
        try Migrations.relay().migrate(queue)
        let (a, b) = try queue.read { db in
            (
                try ReadCursorQueries.cursor(db, userID: "u", conversationID: "cv_a"),
                try ReadCursorQueries.cursor(db, userID: "u", conversationID: "cv_b")
            )
        }
        #expect(a == ReadCursor(userID: "u", conversationID: "cv_a", seq: 2, updatedAt: 20))
        #expect(b?.seq == 3)
    }
}
