import Foundation
import PostgresNIO
import RelayCore
import Testing

@testable import RelayStorePostgres

/// The conversation methods of `PostgresJournal`, through the journal, against a real database:
/// what `ConversationStoreTests` and `ReadCursorStoreTests` promise of the SQLite store.
@Suite(.timeLimit(.minutes(1))) struct PostgresConversationJournalTests {
    func resolve(
        _ journal: PostgresJournal,
        _ key: ConversationKey,
        user: String = "u1",
        draft: ConversationDraft = ConversationDraft(),
        at millis: Int64 = 5
    ) async throws -> Conversation {
        try await awaiting { journal.resolveConversation(key, userID: user, draft: draft, now: millis, completion: $0) }
    }

    func fetch(_ journal: PostgresJournal, _ id: String) async throws -> Conversation? {
        try await awaiting { journal.conversation(id: id, completion: $0) }
    }

    @Test func aKeyResolvesToOneConversationPerUserAndExtraKeysNameItToo() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let draft = ConversationDraft(
            title: "app",
            backend: "echo",
            workingDirectory: "/srv/app",
            extraKeys: [ConversationKey("companion.dir", "/srv/app")]
        )
        let first = try await resolve(journal, ConversationKey("companion", "s1"), draft: draft)
        let again = try await resolve(journal, ConversationKey("companion.dir", "/srv/app"), at: 9)
        #expect(first == again)
        #expect(Set(first.keys) == [ConversationKey("companion", "s1"), ConversationKey("companion.dir", "/srv/app")])
        #expect(first.workingDirectory == "/srv/app" && first.backend == "echo" && first.title == "app" && first.createdAt == 5)
        #expect(first.changeSeq == 1, "creating it took the owner's first seq")
        #expect(try await fetch(journal, first.id) == first)
        let other = try await resolve(journal, ConversationKey("companion", "s1"), user: "u2", draft: draft)
        #expect(other.id != first.id, "keys are per user")
        #expect(try await awaiting { journal.findConversation(ConversationKey("companion", "s1"), userID: "u1", completion: $0) } == first)
        #expect(try await awaiting { journal.findConversation(.main, userID: "u1", completion: $0) } == nil, "finding creates nothing")
        #expect(try await fixture.database.integers("SELECT count(*) FROM conversations") == [2])
        await fixture.stop()
    }

    /// Another node creates the same key's conversation and has not committed yet: the journal's
    /// resolve waits for it and returns that conversation instead of making a second one.
    @Test func aKeyBeingCreatedElsewhereResolvesToTheOtherNodesConversation() async throws {
        let fixture = try await JournalFixture()
        let other = try await fixture.database.connect("other-node")
        try await other.query("BEGIN", logger: fixture.database.logger)
        try await other.query(
            """
            INSERT INTO conversations (id, user_id, created_ms, updated_ms, change_seq) VALUES ('cv_other', 'u1', 1, 1, 1)
            """,
            logger: fixture.database.logger
        )
        try await other.query(
            "INSERT INTO conversation_keys (user_id, scheme, key, conversation_id) VALUES ('u1', 'session', 'main', 'cv_other')",
            logger: fixture.database.logger
        )
        let resolved = Recorder<String>()
        fixture.journal.resolveConversation(.main, userID: "u1", draft: ConversationDraft(), now: 5) { result in
            resolved.append((try? result.get().id) ?? "failed: \(result)")
        }
        try await eventually("the resolve to wait for the other node's key") {
            try await fixture.database.integers(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(fixture.database.name)' AND wait_event_type = 'Lock'"
            ) == [1]
        }
        try await other.query("COMMIT", logger: fixture.database.logger)
        try await eventually("the resolve") { !resolved.all.isEmpty }
        #expect(resolved.all == ["cv_other"])
        #expect(try await fixture.database.integers("SELECT count(*) FROM conversations") == [1])
        try await other.close()
        await fixture.stop()
    }

    /// A key left naming a conversation that is gone is taken by the new one, as SQLite replaces it.
    @Test func aKeyNamingAMissingConversationIsTakenOver() async throws {
        let fixture = try await JournalFixture()
        _ = try await fixture.database.integers(
            "INSERT INTO conversation_keys (user_id, scheme, key, conversation_id) VALUES ('u1', 'session', 'main', 'cv_gone') RETURNING 1::bigint"
        )
        let conversation = try await resolve(fixture.journal, .main)
        #expect(conversation.id != "cv_gone" && conversation.keys == [.main])
        #expect(try await awaiting { fixture.journal.findConversation(.main, userID: "u1", completion: $0) } == conversation)
        await fixture.stop()
    }

    @Test func aBackendSessionIsStoredWithItsConversationAndCanBeForgotten() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let conversation = try await resolve(journal, .main)
        #expect(conversation.backendSession == nil)
        journal.saveBackendSession("sess-1", conversationID: conversation.id)
        #expect(try await fetch(journal, conversation.id)?.backendSession == "sess-1")
        #expect(try await resolve(journal, .main, at: 6).backendSession == "sess-1", "a resolved conversation carries its backend session")
        journal.saveBackendSession(nil, conversationID: conversation.id)
        #expect(try await fetch(journal, conversation.id)?.backendSession == nil)
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    @Test func settingsRoundTripAndNoneSetIsNull() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        var settings = ConversationSettings()
        settings.category = "Work"
        let conversation = try await resolve(journal, .session("s"), draft: ConversationDraft(settings: settings))
        #expect(conversation.settings.category == "Work")
        let edit = ConversationEdit.all([.configure(.thinkingLevel("high")), .configure(.fastMode(.auto)), .configure(.pinned(true))])
        let edited = try #require(try await awaiting { journal.edit(conversationID: conversation.id, edit, now: 7, completion: $0) })
        #expect(edited.settings.pinnedAt == 7 && edited.updatedAt == 7)
        let read = try #require(try await fetch(journal, conversation.id))
        #expect(read.settings == edited.settings && read.settings.thinkingLevel == "high" && read.settings.fastMode == .auto)
        let cleared = ConversationEdit.all([
            .configure(.thinkingLevel(nil)), .configure(.fastMode(nil)), .configure(.pinned(false)), .configure(.category(nil)),
        ])
        _ = try await awaiting { journal.edit(conversationID: conversation.id, cleared, now: 9, completion: $0) }
        #expect(try await fixture.database.integers("SELECT count(*) FROM conversations WHERE settings IS NULL") == [1])
        #expect(try await fetch(journal, conversation.id)?.settings == ConversationSettings())
        await fixture.stop()
    }

    /// Every edit takes a new seq of the owner's clock and announces it on `clawrelay_log`.
    @Test func editsTakeChangeSeqsAndAnnounceThem() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let payloads = Recorder<String>()
        let tap = try await NotificationTap.start(fixture.database, into: payloads)
        let conversation = try await resolve(journal, .main)
        let renamed = try #require(try await awaiting { journal.edit(conversationID: conversation.id, .retitle("T"), now: 8, completion: $0) })
        #expect(renamed.title == "T" && renamed.updatedAt == 8 && renamed.changeSeq == conversation.changeSeq + 1)
        let archived = try #require(try await awaiting { journal.edit(conversationID: conversation.id, .archive(true), now: 9, completion: $0) })
        #expect(archived.archived && archived.archivedAt == 9 && archived.changeSeq == renamed.changeSeq + 1)
        #expect(try await fetch(journal, conversation.id) == archived)
        #expect(try await fixture.database.integers("SELECT last FROM streams WHERE stream_id = 'u1'") == [archived.changeSeq])
        try await eventually("three announcements") { payloads.all.count == 3 }
        #expect(NotificationTap.positions(payloads) == ["u1:0:1", "u1:1:2", "u1:2:3"])
        #expect(try await awaiting { journal.edit(conversationID: "cv_missing", .retitle("x"), now: 9, completion: $0) } == nil)
        try await tap.close()
        await fixture.stop()
    }

    @Test func aResetMovesTheKeysToAFreshConversationAndArchivesTheOld() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let draft = ConversationDraft(title: "t", backend: "echo", extraKeys: [ConversationKey("companion", "s1")])
        let old = try await resolve(journal, .main, draft: draft)
        journal.saveBackendSession("sess", conversationID: old.id)
        let reset = try #require(try await awaiting { journal.resetConversation(id: old.id, freshID: "cv_fresh", now: 20, completion: $0) })
        #expect(reset.fresh.id == "cv_fresh" && reset.fresh.title == "t" && reset.fresh.backend == "echo" && reset.fresh.backendSession == nil)
        #expect(Set(reset.fresh.keys) == Set(old.keys) && reset.old.keys.isEmpty)
        #expect(reset.old.archived && reset.old.archivedAt == 20 && reset.old.backendSession == nil)
        #expect(reset.fresh.changeSeq == old.changeSeq + 1 && reset.old.changeSeq == old.changeSeq + 2)
        #expect(try await fetch(journal, old.id) == reset.old)
        #expect(try await fetch(journal, "cv_fresh") == reset.fresh)
        #expect(try await awaiting { journal.findConversation(.main, userID: "u1", completion: $0) }?.id == "cv_fresh")
        #expect(try await awaiting { journal.resetConversation(id: "cv_missing", freshID: "x", now: 1, completion: $0) } == nil)
        await fixture.stop()
    }

    @Test func aDetachTakesOneSchemesKeysOffAndArchives() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let conversation = try await resolve(journal, .main, draft: ConversationDraft(extraKeys: [ConversationKey("companion", "s1")]))
        let detached = try #require(
            try await awaiting { journal.detachConversation(id: conversation.id, scheme: "session", now: 30, completion: $0) }
        )
        #expect(detached.keys == [ConversationKey("companion", "s1")] && detached.archived && detached.archivedAt == 30)
        #expect(detached.changeSeq == conversation.changeSeq + 1)
        #expect(try await fetch(journal, conversation.id) == detached)
        #expect(try await awaiting { journal.findConversation(.main, userID: "u1", completion: $0) } == nil)
        #expect(try await awaiting { journal.detachConversation(id: "cv_missing", scheme: "session", now: 1, completion: $0) } == nil)
        await fixture.stop()
    }

    @Test func anAddedKeyNamesTheConversationInsteadOfWhereItPointed() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let first = try await resolve(journal, .session("a"))
        let second = try await resolve(journal, .session("b"))
        try await awaiting { journal.addKey(ConversationKey("companion", "s1"), to: first, completion: $0) }
        try await awaiting { journal.addKey(ConversationKey("companion", "s1"), to: second, completion: $0) }
        #expect(try await awaiting { journal.findConversation(ConversationKey("companion", "s1"), userID: "u1", completion: $0) }?.id == second.id)
        #expect(try await fetch(journal, first.id)?.keys == [.session("a")])
        await fixture.stop()
    }

    /// A list is ordered by last activity: an answer moves its conversation up without an edit.
    @Test func conversationsAreListedMostRecentlyActiveFirst() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let older = try await resolve(journal, .session("older"), at: 10)
        let newer = try await resolve(journal, .session("newer"), at: 20)
        _ = try await resolve(journal, .session("theirs"), user: "u2", at: 30)
        #expect(try await awaiting { journal.conversations(userID: "u1", limit: 10, completion: $0) }.map(\.id) == [newer.id, older.id])
        let log = LogRows(fixture.database)
        let sent = try await log.userMessage("u1", older.id, client: "m1", at: 40)
        #expect(try await awaiting { journal.conversations(userID: "u1", limit: 10, completion: $0) }.map(\.id) == [newer.id, older.id])
        try await log.answer("u1", older.id, to: sent, at: 50)
        let listed = try await awaiting { journal.conversations(userID: "u1", limit: 10, completion: $0) }
        #expect(listed.map(\.id) == [older.id, newer.id] && listed.first?.updatedAt == 50, "an answer is activity, a user message is not")
        #expect(try await awaiting { journal.conversations(userID: "u1", limit: 1, completion: $0) }.count == 1)
        await fixture.stop()
    }

    @Test func deletingAConversationDeletesEverythingInItAndNothingElse() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let doomed = try await resolve(journal, .session("doomed"))
        let kept = try await resolve(journal, .session("kept"))
        let log = LogRows(fixture.database)
        for conversation in [doomed, kept] {
            let id = conversation.id
            let answered = try await log.userMessage("u1", id, client: "a-\(id)")
            try await log.answer("u1", id, to: answered)
            try await log.failure("u1", id, of: try await log.userMessage("u1", id, client: "f-\(id)"), reason: "boom")
            try await log.note("u1", id, id: "note-\(id)")
            try await fixture.database.integers(
                """
                INSERT INTO turns (run_id, conversation_id, stream_id, order_seq, backend, device_id, client_id, state)
                VALUES ('t-\(id)', '\(id)', 'u1', 1, 'echo', 'd1', 'c', 0) RETURNING 1::bigint
                """
            )
            _ = try await awaiting { journal.markRead(userID: "u1", conversationID: id, seq: 100, now: 1, completion: $0) }
        }
        let last = try await fixture.database.integers("SELECT last FROM streams WHERE stream_id = 'u1'")
        #expect(try await awaiting { journal.deleteConversation(id: doomed.id, completion: $0) })
        for table in ["events", "messages", "turns", "conversation_keys", "read_cursors"] {
            #expect(try await fixture.database.integers("SELECT count(*) FROM \(table) WHERE conversation_id = '\(doomed.id)'") == [0], "\(table)")
            #expect(try await fixture.database.integers("SELECT count(*) FROM \(table) WHERE conversation_id = '\(kept.id)'") != [0], "\(table)")
        }
        #expect(try await fetch(journal, doomed.id) == nil)
        #expect(try await fetch(journal, kept.id) != nil)
        #expect(try await fixture.database.integers("SELECT last FROM streams WHERE stream_id = 'u1'") == last, "the clock does not go back")
        #expect(try await awaiting { journal.deleteConversation(id: doomed.id, completion: $0) } == false)
        await fixture.stop()
    }
}
