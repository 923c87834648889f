import Foundation
import GRDB
import RelayCore
import Synchronization
import Testing

@testable import RelayStore

/// The store writer keeps the users' seq clocks in memory (issue 26): nothing it takes writes
/// `user_seqs`, and yet no seq is ever taken twice, across a restart or a delete.
@Suite struct SeqClockTests {
    func wait<T: Sendable>(_ start: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in start { continuation.resume(with: $0) } }
    }

    func send(_ journal: StoreJournal, _ clientID: String, to conversationID: String) async throws -> (ChatEvent, AnswerSlot) {
        let message = UserMessage(conversationID: conversationID, userID: "u", deviceID: "phone", clientID: clientID, content: clientID)
        let acceptance: Acceptance = try await wait { done in journal.accept(message, now: 1, queue: []) { done($0) } }
        guard case .fresh(let event, _, let answer) = acceptance else { throw StoreError("not accepted") }
        return (event, answer)
    }

    func conversation(_ journal: StoreJournal, _ name: String) async throws -> String {
        try await wait { done in journal.resolveConversation(.session(name), userID: "u", draft: ConversationDraft(), now: 1) { done($0) } }.id
    }

    @Test func theWritersClockIsRecoveredAfterARestartAndKeptOverADelete() async throws {
        let directory = NSTemporaryDirectory() + "clawrelay-seq-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var store = try Store(dataDirectory: directory, executor: QueueLoop())
        var journal = StoreJournal(store: store) { _, _ in }
        let main = try await conversation(journal, "main")
        let written = try store.read { try Int64.fetchOne($0, sql: "SELECT last FROM user_seqs WHERE user_id = 'u'") } ?? 0
        let (first, firstSlot) = try await send(journal, "c1", to: main)
        let (second, _) = try await send(journal, "c2", to: main)
        #expect(first.seq > written && firstSlot.seq == first.seq + 1 && second.seq > firstSlot.seq)
        #expect(try store.read { try Int64.fetchOne($0, sql: "SELECT last FROM user_seqs WHERE user_id = 'u'") } ?? 0 == written, "not written")
        store.close()

        store = try Store(dataDirectory: directory, executor: QueueLoop())
        journal = StoreJournal(store: store) { _, _ in }
        let (third, thirdSlot) = try await send(journal, "c3", to: main)
        #expect(third.seq > second.seq + 1, "recovered past the last answer slot: \(second.seq) → \(third.seq)")
        let deleted: Bool = try await wait { done in journal.deleteConversation(id: main) { done($0) } }
        #expect(deleted)
        let other = try await conversation(journal, "other")
        let (fourth, _) = try await send(journal, "c4", to: other)
        #expect(fourth.seq > thirdSlot.seq, "the deleted rows' seqs are not taken again")
        store.close()
    }
}
