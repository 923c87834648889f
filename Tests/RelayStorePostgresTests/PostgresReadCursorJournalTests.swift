import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// Read cursors and summaries of `PostgresJournal`: what `ReadCursorStoreTests` promises.
@Suite(.timeLimit(.minutes(1))) struct PostgresReadCursorJournalTests {
    func markRead(
        _ journal: PostgresJournal,
        _ conversation: String,
        _ seq: Int64,
        user: String = "u1",
        at millis: Int64 = 100
    ) async throws
        -> ReadCursor?
    {
        try await awaiting { journal.markRead(userID: user, conversationID: conversation, seq: seq, now: millis, completion: $0) }
    }

    @Test func aCursorMovesOnlyForwardAndStopsAtTheNewestEvent() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let log = LogRows(fixture.database)
        let seqs = [try await log.note("u1", "c1", id: "n1"), try await log.note("u1", "c1", id: "n2"), try await log.note("u1", "c1", id: "n3")]
        let sent = try await log.userMessage("u1", "c9", client: "m1")
        try await log.failure("u1", "c1", of: sent, reason: "boom")
        #expect(try await markRead(journal, "c1", seqs[1], at: 100) == ReadCursor(userID: "u1", conversationID: "c1", seq: seqs[1], updatedAt: 100))
        #expect(try await markRead(journal, "c1", seqs[0], at: 200) == nil, "backwards is no move")
        #expect(try await markRead(journal, "c1", seqs[1], at: 300) == nil, "the same place is no move")
        #expect(try await markRead(journal, "c1", 10_000, at: 400)?.seq == seqs[2], "past the newest event: clamped to it, not to the failure")
        #expect(try await markRead(journal, "c1", seqs[2], user: "u2", at: 500)?.seq == seqs[2], "cursors are per user")
        #expect(try await markRead(journal, "empty", 5) == nil, "nothing to read in an empty conversation")
        #expect(try await fixture.database.integers("SELECT seq FROM read_cursors WHERE user_id = 'u1' ORDER BY seq") == [seqs[2]])
        await fixture.stop()
    }

    /// A user's own message counts as read whether or not its write moved the stored row.
    @Test func onesOwnMessageIsReadAndTheCursorDoesNotMoveBackBehindIt() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let chat = try await awaiting { journal.resolveConversation(.main, userID: "u1", draft: ConversationDraft(), now: 1, completion: $0) }
        let log = LogRows(fixture.database)
        let first = try await log.note("u1", chat.id, id: "n1")
        let sent = try await log.userMessage("u1", chat.id, client: "m1", at: 1_500)
        #expect(try await markRead(journal, chat.id, first) == nil, "behind one's own message: no move")
        #expect(
            try await fixture.database.integers("SELECT seq FROM read_cursors WHERE user_id = 'u1'") == [sent.seq],
            "the row is brought up to the message"
        )
        let summary = try #require(try await awaiting { journal.summary(conversationID: chat.id, userID: "u1", completion: $0) })
        #expect(summary.lastReadSeq == sent.seq && summary.unreadCount == 0)
        await fixture.stop()
    }

    @Test func aSummaryCountsTheAnswersAndNotesAfterTheCursor() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let chat = try await awaiting { journal.resolveConversation(.main, userID: "u1", draft: ConversationDraft(), now: 1, completion: $0) }
        let log = LogRows(fixture.database)
        let q1 = try await log.userMessage("u1", chat.id, client: "q1")
        try await log.answer("u1", chat.id, to: q1, content: "a1")
        let q2 = try await log.userMessage("u1", chat.id, client: "q2")
        try await log.answer("u1", chat.id, to: q2, content: "a2")
        let q3 = try await log.userMessage("u1", chat.id, client: "q3")
        try await log.failure("u1", chat.id, of: q3, reason: "boom")
        try await log.note("u1", chat.id, id: "n1", content: "n")
        var summary = try #require(try await awaiting { journal.summary(conversationID: chat.id, userID: "u1", completion: $0) })
        #expect(summary.lastReadSeq == q3.seq && summary.unreadCount == 1, "only the note is after one's last message; a failure never counts")
        #expect(summary.lastEvent?.content == "n" && summary.lastEvent?.isNote == true && summary.messageCount == 6)
        summary = try #require(try await awaiting { journal.summary(conversationID: chat.id, userID: "u2", completion: $0) })
        #expect(summary.lastReadSeq == 0 && summary.unreadCount == 3, "another user has read nothing: two answers and the note")

        let other = try await awaiting {
            journal.resolveConversation(.session("other"), userID: "u1", draft: ConversationDraft(), now: 2, completion: $0)
        }
        try await log.userMessage("u1", other.id, client: "only-me")
        let all = try await awaiting { journal.summaries(userID: "u1", limit: 10, completion: $0) }
        #expect(all.map(\.conversation.id) == [chat.id, other.id], "the answered one is the most recently active")
        #expect(all.last?.unreadCount == 0 && all.last?.messageCount == 1)
        #expect(try await awaiting { journal.summaries(userID: "u1", limit: 1, completion: $0) }.count == 1, "bounded")
        #expect(try await awaiting { journal.summary(conversationID: "cv_missing", userID: "u1", completion: $0) } == nil)
        await fixture.stop()
    }
}
