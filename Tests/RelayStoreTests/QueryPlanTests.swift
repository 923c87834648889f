import Foundation
import GRDB
import RelayCore
import Synchronization
import Testing

@testable import RelayStore

/// Every read of the history, the timeline, cursors and queues finds its rows through an index
/// (issue 26: "check EXPLAIN QUERY PLAN for every read"): the statements the queries run are
/// traced, and each one's plan is checked for a full scan of a table that grows with the history.
@Suite struct QueryPlanTests {
    /// Tables that grow with the history. (`queue_items` holds only the failed turns still
    /// queued, and the purge walks it to drop the ones behind every floor.)
    static let growing = ["events", "messages", "queue_delivered", "queue_sources", "read_cursors", "conversations", "conversation_keys"]

    @Test func everyReadOfTheHistoryTheTimelineCursorsAndQueuesUsesAnIndex() throws {
        let temp = try TemporaryStore()
        let tablet = QueueTarget(deviceID: "tablet", ttlMillis: 60_000, capacity: 100)
        let (conversation, first) = try temp.store.write { db in
            let conversation = try ConversationQueries.resolve(db, key: .session("main"), userID: "u", draft: ConversationDraft(), at: 1)
            var events: [ChatEvent] = []
            for index in 0..<3 {
                let message = UserMessage(
                    conversationID: conversation.id,
                    userID: "u",
                    deviceID: "phone",
                    clientID: "c\(index)",
                    content: "q\(index)"
                )
                guard case .fresh(let event, let runID, let answer) = try MessageQueries.accept(db, message, at: 10, queue: [tablet]) else {
                    throw StoreError("not accepted")
                }
                events.append(event)
                let turn = TurnRef(runID: runID, deviceID: "phone", clientID: "c\(index)")
                if index == 2 {
                    let failure = TurnFailure(
                        turn: turn,
                        conversationID: conversation.id,
                        userID: "u",
                        cause: .failed,
                        reason: "x",
                        timestampMillis: 20
                    )
                    try MessageQueries.fail(db, failure, queue: [tablet])
                } else {
                    _ = try MessageQueries.finalize(
                        db,
                        turn: turn,
                        userID: "u",
                        conversationID: conversation.id,
                        eventID: answer.id,
                        content: "a\(index)",
                        at: 20,
                        queue: [tablet]
                    )
                }
            }
            return (conversation, events[0])
        }
        let traced = Mutex<Set<String>>([])
        try temp.store.write { db in
            db.trace { event in
                if case .statement(let statement) = event { _ = traced.withLock { $0.insert(statement.expandedSQL) } }
            }
            defer { db.trace(nil) }
            _ = try EventQueries.replay(db, audiences: ["u"], after: first.id, limit: 10)
            _ = try EventQueries.replay(db, audiences: ["u"], after: nil, limit: 10)
            _ = try EventQueries.conversation(db, userID: "u", conversationID: conversation.id, limit: 10)
            _ = try EventQueries.last(db, conversationID: conversation.id)
            _ = try EventQueries.count(db, conversationID: conversation.id)
            _ = try EventQueries.fetch(db, id: first.id)
            _ = try TimelineQueries.page(db, userID: "u", conversationID: conversation.id, before: nil, limit: 10)
            _ = try TimelineQueries.after(db, userID: "u", seq: 0, limit: 10)
            _ = try TimelineQueries.lastEvents(db, conversationIDs: [conversation.id])
            _ = try ReadCursorQueries.summaries(db, userID: "u", limit: 10)
            _ = try ReadCursorQueries.markRead(db, userID: "u", conversationID: conversation.id, seq: 100, at: 30)
            _ = try ConversationQueries.list(db, userID: "u", limit: 10)
            _ = try ConversationQueries.changed(db, userID: "u", after: 0)
            _ = try ConversationQueries.conversationID(db, key: .session("main"), userID: "u")
            _ = try MessageQueries.fetch(db, deviceID: "phone", clientID: "c1")
            _ = try QueueQueries.pending(db, deviceID: "tablet", at: 40)
            _ = try QueueQueries.purge(db, at: 40)
            _ = try SeqQueries.next(db, userID: "u")
            _ = try MessageQueries.failActive(db, at: 50)
        }
        let statements = traced.withLock { $0 }.filter { sql in
            ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH"].contains { sql.uppercased().hasPrefix($0) }
        }
        #expect(statements.count > 20, "the reads ran: \(statements.count)")
        var scans: [String] = []
        try temp.store.read { db in
            for sql in statements.sorted() {
                for row in try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql) {
                    let detail: String = row["detail"]
                    // `messages_running` holds only the turns running now.
                    guard detail.hasPrefix("SCAN "), !detail.contains("USING INDEX messages_running") else { continue }
                    let table = detail.dropFirst(5).split(separator: " ").first.map(String.init) ?? ""
                    if Self.growing.contains(table) || ["e", "m", "c"].contains(table) { scans.append("\(detail)  ←  \(sql)") }
                }
            }
        }
        #expect(scans.isEmpty, "full scans:\n\(scans.joined(separator: "\n"))")
    }
}
