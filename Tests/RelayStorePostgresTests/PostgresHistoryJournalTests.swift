import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// The history reads of `PostgresJournal` (`HistoryJournal`) over rows written as the message
/// writes leave them (`LogRows`), against a real database.
@Suite(.timeLimit(.minutes(1))) struct PostgresHistoryJournalTests {
    func replay(_ journal: PostgresJournal, _ audiences: [String], after cursor: String?, limit: Int = 100) async throws -> ReplayWindow {
        try await awaiting { journal.replay(audiences: audiences, after: cursor, limit: limit, completion: $0) }
    }

    @Test func aReplayStartsAfterItsCursorOrAtTheTail() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let log = LogRows(fixture.database)
        let q1 = try await log.userMessage("u1", "c1", client: "q1", content: "one")
        try await log.answer("u1", "c1", to: q1, content: "two")
        let q2 = try await log.userMessage("u1", "c1", client: "q2", content: "three")
        try await log.failure("u1", "c1", of: q2, reason: "boom")
        try await log.note("u1", "c2", id: "n1", content: "four")
        try await log.userMessage("u2", "c3", client: "theirs")

        var window = try await replay(journal, ["u1"], after: q1.eventID)
        #expect(window.events.map(\.content) == ["two", "three", "four"] && !window.historyReset && !window.truncated)
        #expect(window.events.last?.isNote == true && window.events.last?.role == .assistant && window.events[1].deviceID == "d1")
        #expect(window.highWater == ["u1": try await fixture.database.integers("SELECT max(seq) FROM events WHERE kind = 0 AND stream_id = 'u1'")[0]])
        window = try await replay(journal, ["u1"], after: nil)
        #expect(window.events.map(\.content) == ["one", "two", "three", "four"] && window.historyReset)
        window = try await replay(journal, ["u1"], after: "ev_unknown")
        #expect(window.events.count == 4 && window.historyReset, "an unknown cursor replays the tail")
        window = try await replay(journal, ["u1"], after: "f_" + q2.runID)
        #expect(window.historyReset, "a failure is no event a cursor can name")
        window = try await replay(journal, ["u1"], after: nil, limit: 2)
        #expect(window.events.map(\.content) == ["three", "four"] && window.truncated, "the newest ones")
        window = try await replay(journal, ["u2"], after: q1.eventID)
        #expect(window.historyReset && window.events.map(\.content) == ["question"], "another stream's cursor is unknown here")
        await fixture.stop()
    }

    /// Several streams are merged in the order their rows were written, and a cursor in one marks
    /// the same point in the others.
    @Test func aReplayOfSeveralAudiencesMergesThemInWritingOrder() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let log = LogRows(fixture.database)
        try await log.note("@admins", "shared", id: "s1", content: "s1")
        try await log.note("admin", "mine", id: "a1", content: "a1")
        try await log.note("admin", "mine", id: "a2", content: "a2")
        try await log.note("@admins", "shared", id: "s2", content: "s2")
        try await log.note("admin", "mine", id: "a3", content: "a3")
        try await log.note("@admins", "shared", id: "s3", content: "s3")

        var window = try await replay(journal, ["admin", "@admins"], after: nil)
        #expect(window.events.map(\.id) == ["s1", "a1", "a2", "s2", "a3", "s3"])
        #expect(window.highWater == ["admin": 3, "@admins": 3])
        window = try await replay(journal, ["admin", "@admins"], after: "a2")
        #expect(window.events.map(\.id) == ["s2", "a3", "s3"] && !window.historyReset)
        window = try await replay(journal, ["@admins", "admin"], after: "s2")
        #expect(window.events.map(\.id) == ["a3", "s3"])
        window = try await replay(journal, ["admin", "@admins"], after: "s1", limit: 3)
        #expect(window.events.map(\.id) == ["s2", "a3", "s3"] && window.truncated)
        await fixture.stop()
    }

    @Test func recentEventsSkipCountAndFitTheBudget() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let log = LogRows(fixture.database)
        for index in 1...5 { try await log.note("u1", "c1", id: "n\(index)", content: String(repeating: "x", count: index * 10)) }
        try await log.note("u2", "c1", id: "other", content: "another stream")
        func recent(skipping: Int = 0, limit: Int = 10, budget: Int = .max) async throws -> RecentEvents {
            try await awaiting {
                journal.recentEvents(userID: "u1", conversationID: "c1", skipping: skipping, limit: limit, byteBudget: budget, completion: $0)
            }
        }
        var page = try await recent()
        #expect(page.events.map(\.id) == ["n1", "n2", "n3", "n4", "n5"] && !page.hasMore)
        page = try await recent(skipping: 1, limit: 2)
        #expect(page.events.map(\.id) == ["n3", "n4"] && page.hasMore)
        page = try await recent(budget: 90)
        #expect(page.events.map(\.id) == ["n4", "n5"] && page.hasMore, "50 + 40 bytes fit, 30 more do not")
        page = try await recent(budget: 1)
        #expect(page.events.map(\.id) == ["n5"] && page.hasMore, "always the newest one")
        await fixture.stop()
    }

    /// A running answer's placeholder sits at its slot; a failure is an error entry under the
    /// answer's id at the failure's seq; a finished answer is complete, never an error.
    @Test func aTimelinePageShowsPlaceholdersAndFailures() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let log = LogRows(fixture.database)
        let answered = try await log.userMessage("u1", "c1", client: "q1", content: "q1", at: 10)
        let answerSeq = try await log.answer("u1", "c1", to: answered, content: "a1", at: 20)
        let failed = try await log.userMessage("u1", "c1", client: "q2", content: "q2", at: 30)
        let failureSeq = try await log.failure("u1", "c1", of: failed, reason: "boom", at: 40)
        let running = try await log.userMessage("u1", "c1", client: "q3", content: "q3", at: 50)
        try await log.userMessage("u1", "c2", client: "elsewhere")
        func page(before seq: Int64? = nil, limit: Int = 10, budget: Int = .max) async throws -> TimelinePage {
            try await awaiting {
                journal.timelinePage(userID: "u1", conversationID: "c1", before: seq, limit: limit, byteBudget: budget, completion: $0)
            }
        }
        let all = try await page()
        #expect(
            all.entries == [
                TimelineEntry(
                    id: answered.eventID,
                    clientID: "q1",
                    conversationID: "c1",
                    role: .user,
                    content: "q1",
                    status: .complete,
                    seq: answered.seq,
                    createdAt: 10,
                    completedAt: 10
                ),
                TimelineEntry(
                    id: answered.answerID,
                    conversationID: "c1",
                    role: .assistant,
                    content: "a1",
                    status: .complete,
                    seq: answerSeq,
                    createdAt: 20,
                    completedAt: 20
                ),
                TimelineEntry(
                    id: failed.eventID,
                    clientID: "q2",
                    conversationID: "c1",
                    role: .user,
                    content: "q2",
                    status: .complete,
                    seq: failed.seq,
                    createdAt: 30,
                    completedAt: 30
                ),
                TimelineEntry(
                    id: failed.answerID,
                    conversationID: "c1",
                    role: .assistant,
                    content: "",
                    status: .error,
                    error: "boom",
                    seq: failureSeq,
                    createdAt: 30,
                    completedAt: 40
                ),
                TimelineEntry(
                    id: running.eventID,
                    clientID: "q3",
                    conversationID: "c1",
                    role: .user,
                    content: "q3",
                    status: .complete,
                    seq: running.seq,
                    createdAt: 50,
                    completedAt: 50
                ),
                TimelineEntry(
                    id: running.answerID,
                    conversationID: "c1",
                    role: .assistant,
                    content: "",
                    status: .pending,
                    seq: running.answerSeq,
                    createdAt: 50
                ),
            ]
        )
        #expect(!all.hasMore)
        var older = try await page(before: failureSeq, limit: 2)
        #expect(older.entries.map(\.seq) == [answerSeq, failed.seq] && older.hasMore)
        older = try await page(before: answerSeq)
        #expect(older.entries.map(\.seq) == [answered.seq] && !older.hasMore)
        let small = try await page(budget: 4)
        #expect(small.entries.map(\.content) == ["q2", "", "q3", ""] && small.hasMore, "empty placeholders cost nothing; a1 does not fit")
        await fixture.stop()
    }

    @Test func aSyncReturnsWhatCameAfterASeqWithTheConversationsItTouches() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let log = LogRows(fixture.database)
        let quiet = try await awaiting {
            journal.resolveConversation(.session("quiet"), userID: "u1", draft: ConversationDraft(), now: 1, completion: $0)
        }
        let busy = try await awaiting {
            journal.resolveConversation(.session("busy"), userID: "u1", draft: ConversationDraft(), now: 1, completion: $0)
        }
        let sent = try await log.userMessage("u1", busy.id, client: "q1", content: "12345")
        let failure = try await log.failure("u1", busy.id, of: sent, reason: "boom")
        let renamed = try #require(try await awaiting { journal.edit(conversationID: quiet.id, .retitle("t"), now: 2, completion: $0) })
        let after = try await log.userMessage("u1", busy.id, client: "q2", content: "67890")
        func sync(after seq: Int64, limit: Int = 100, budget: Int = .max) async throws -> TimelineSync {
            try await awaiting { journal.timelineSync(userID: "u1", after: seq, limit: limit, byteBudget: budget, completion: $0) }
        }
        var result = try await sync(after: busy.changeSeq)
        #expect(result.entries.map(\.seq) == [sent.seq, failure, after.seq, after.answerSeq] && !result.more)
        #expect(result.conversations.map(\.id) == [quiet.id, busy.id] && result.conversations[0] == renamed, "changed first, then touched")
        result = try await sync(after: renamed.changeSeq)
        #expect(result.entries.map(\.seq) == [after.seq, after.answerSeq] && result.conversations.map(\.id) == [busy.id])
        result = try await sync(after: 0, limit: 2)
        #expect(result.entries.map(\.seq) == [sent.seq, failure] && result.more)
        #expect(result.conversations.map(\.id) == [busy.id, quiet.id], "both changed after 0, in change order")
        result = try await sync(after: 0, budget: 7)
        #expect(result.entries.map(\.content) == ["12345", ""] && result.more)
        result = try await sync(after: after.answerSeq)
        #expect(result.entries.isEmpty && result.conversations.isEmpty && !result.more)
        await fixture.stop()
    }

    @Test func eventsAreReadByIDCountedAndTheLastOneFound() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let log = LogRows(fixture.database)
        let sent = try await log.userMessage("u1", "c1", device: "phone", client: "q1", content: "hi", attachments: #"[{"assetId":"as1"}]"#, at: 7)
        try await log.failure("u1", "c1", of: sent, reason: "boom")
        let noteSeq = try await log.note("u1", "c2", id: "n1", content: "note", at: 9)
        let notes = try await awaiting {
            journal.timelinePage(userID: "u1", conversationID: "c2", before: nil, limit: 10, byteBudget: .max, completion: $0)
        }
        #expect(
            notes.entries == [
                TimelineEntry(
                    id: "n1",
                    conversationID: "c2",
                    role: .assistant,
                    content: "note",
                    status: .complete,
                    seq: noteSeq,
                    createdAt: 9,
                    completedAt: 9
                )
            ],
            "a note is an assistant entry"
        )
        let event = try #require(try await awaiting { journal.event(id: sent.eventID, completion: $0) })
        #expect(
            event
                == ChatEvent(
                    id: sent.eventID,
                    seq: sent.seq,
                    userID: "u1",
                    conversationID: "c1",
                    role: .user,
                    content: "hi",
                    timestampMillis: 7,
                    deviceID: "phone",
                    attachmentsJSON: #"[{"assetId":"as1"}]"#
                )
        )
        #expect(try await awaiting { journal.event(id: "f_" + sent.runID, completion: $0) } == nil, "a failure is no event")
        #expect(try await awaiting { journal.eventCount(conversationID: "c1", completion: $0) } == 1)
        let last = try await awaiting { journal.lastEvents(conversationIDs: ["c1", "c2", "c3"], completion: $0) }
        #expect(last.mapValues(\.id) == ["c1": sent.eventID, "c2": "n1"])
        let stored = try #require(try await awaiting { journal.message(deviceID: "phone", clientID: "q1", completion: $0) })
        #expect(stored.event == event && stored.record.state == .failed && stored.record.reason == "boom")
        #expect(stored.record.answer == AnswerSlot(id: sent.answerID, seq: sent.answerSeq) && stored.record.runID == sent.runID)
        #expect(stored.record.userID == "u1" && stored.record.conversationID == "c1")
        #expect(try await awaiting { journal.message(deviceID: "phone", clientID: "nope", completion: $0) } == nil)
        await fixture.stop()
    }

    @Test func anAssetIsMentionedOnlyByItsAudiencesEvents() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let log = LogRows(fixture.database)
        try await log.userMessage("u1", "c1", client: "q1", attachments: #"[{"kind":"image","assetId":"as10","name":"x"}]"#)
        try await log.userMessage("@room", "c2", client: "q2", attachments: #"[{"assetId":"shared"}]"#)
        try await log.userMessage("u1", "c1", client: "q3", content: "the text says assetId as2")
        func mentions(_ asset: String, _ audience: String) async throws -> Bool {
            try await awaiting { journal.mentions(assetID: asset, audience: audience, completion: $0) }
        }
        #expect(try await mentions("as10", "u1"))
        #expect(try await mentions("shared", "@room"))
        #expect(try await !mentions("shared", "u1"), "per audience")
        #expect(try await !mentions("as1", "u1"), "another asset whose id starts the same")
        #expect(try await !mentions("as2", "u1"), "content is not attachments")
        await fixture.stop()
    }
}
