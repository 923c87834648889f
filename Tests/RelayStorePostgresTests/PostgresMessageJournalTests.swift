import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// `CoreJournal`'s turn writes on PostgreSQL: accept, answer, failure, note.
@Suite(.timeLimit(.minutes(1))) struct PostgresMessageJournalTests {
    static func message(client: String, content: String = "hello", device: String = "d1", user: String = "u1") -> UserMessage {
        UserMessage(conversationID: "c1", userID: user, deviceID: device, clientID: client, content: content, attachmentsJSON: nil)
    }

    /// A fresh accept stores the user event and its answer's slot at two consecutive seqs and moves
    /// the sender's read cursor; the same client id again is a duplicate with the stored state, run
    /// and slot; other content under it is a mismatch; a rejection applies only to a fresh message.
    @Test func acceptsFreshThenDuplicateThenMismatch() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        var first = Self.message(client: "m1")
        first.attachmentsJSON = #"[{"b":1, "a":2}]"#
        let fresh = try await awaiting { journal.accept(first, now: 1_000, queue: [], completion: $0) }
        guard case .fresh(let event, let runID, let answer) = fresh else {
            Issue.record("not fresh: \(fresh)")
            return
        }
        #expect(event.seq == 1 && answer.seq == 2 && event.timestampMillis == 1_000 && event.role == .user)
        #expect(event.turn == TurnRef(runID: runID, deviceID: "d1", clientID: "m1"))
        let stored = try await fixture.database.strings("SELECT attachments FROM events WHERE id = '\(event.id)'")
        #expect(stored == [#"[{"b":1, "a":2}]"#], "attachments are kept byte for byte")
        #expect(try await fixture.database.integers("SELECT seq FROM read_cursors WHERE user_id = 'u1' AND conversation_id = 'c1'") == [])
        let read = try await awaiting { journal.markRead(userID: "u1", conversationID: "c1", seq: 1, now: 1_500, completion: $0) }
        #expect(read == nil, "one's own message is read already")
        #expect(
            try await fixture.database.integers("SELECT seq FROM read_cursors WHERE user_id = 'u1' AND conversation_id = 'c1'") == [1],
            "the row caught up with it"
        )

        let again = try await awaiting { journal.accept(first, now: 2_000, queue: [], completion: $0) }
        guard case .duplicate(let state, let againRun, let againAnswer) = again else {
            Issue.record("not a duplicate: \(again)")
            return
        }
        #expect(state == .active && againRun == runID && againAnswer == answer)
        var changed = first
        changed.content = "other"
        guard case .mismatch = try await awaiting({ journal.accept(changed, now: 3_000, queue: [], completion: $0) }) else {
            Issue.record("other content under the same client id is a mismatch")
            return
        }
        var rejected = Self.message(client: "m2")
        rejected.rejection = PostgresStoreError(code: .rejected, message: "too long")
        guard case .rejected = try await awaiting({ journal.accept(rejected, now: 3_000, queue: [], completion: $0) }) else {
            Issue.record("a rejected fresh message is rejected")
            return
        }
        #expect(try await fixture.database.integers("SELECT count(*) FROM messages") == [1])
        #expect(try await fixture.database.integers("SELECT last FROM streams WHERE stream_id = 'u1'") == [2])
        await fixture.stop()
    }

    /// The answer takes the next seq and ends the message; the failure of a turn whose answer was
    /// stored, or a second answer, is refused with `TurnFenced` and writes nothing.
    @Test func storesTheAnswerThenRefusesLateWrites() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let acceptance = try await awaiting { journal.accept(Self.message(client: "m1"), now: 1_000, queue: [], completion: $0) }
        guard case .fresh(_, let runID, let answer) = acceptance else {
            Issue.record("not fresh")
            return
        }
        let turn = TurnRef(runID: runID, deviceID: "d1", clientID: "m1")
        let final = try await awaiting {
            journal.finish(turn, userID: "u1", conversationID: "c1", eventID: answer.id, content: "hi", now: 2_000, queue: [], completion: $0)
        }
        #expect(final.seq == 3 && final.id == answer.id && final.role == .assistant && final.turn == turn)
        #expect(try await fixture.database.integers("SELECT state FROM messages") == [0])
        await #expect(throws: TurnFenced.self) {
            try await awaiting {
                journal.finish(turn, userID: "u1", conversationID: "c1", eventID: "other", content: "again", now: 3_000, queue: [], completion: $0)
            }
        }
        let failure = TurnFailure(turn: turn, conversationID: "c1", userID: "u1", cause: .failed, reason: "late", timestampMillis: 3_000)
        await #expect(throws: TurnFenced.self) { try await awaiting { journal.fail(failure, queue: [], completion: $0) } }
        #expect(try await fixture.database.integers("SELECT count(*) FROM events") == [2])
        #expect(try await fixture.database.integers("SELECT last FROM streams") == [3], "a refused write takes no seq")
        await fixture.stop()
    }

    /// A failure is an event of kind 1 at the next seq; an abort leaves the message aborted, any
    /// other cause failed; the conversation's last activity moves; a registered turn is released.
    @Test func storesAFailureAndReleasesTheTurn() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        try await fixture.database.execute(
            "INSERT INTO conversations (id, user_id, created_ms, updated_ms, change_seq) VALUES ('c1', 'u1', 1, 1, 0)"
        )
        var message = Self.message(client: "m1")
        message.acceptingNode = NodeIncarnation(node: "n1")
        let acceptance = try await awaiting { journal.accept(message, now: 1_000, queue: [], completion: $0) }
        guard case .fresh(_, let runID, _) = acceptance else {
            Issue.record("not fresh")
            return
        }
        #expect(try await fixture.database.integers("SELECT count(*) FROM turns WHERE run_id = '\(runID)' AND state = 0") == [1])
        let turn = TurnRef(runID: runID, deviceID: "d1", clientID: "m1")
        let failure = TurnFailure(turn: turn, conversationID: "c1", userID: "u1", cause: .aborted, reason: "stopped", timestampMillis: 5_000)
        let seq = try await awaiting { journal.fail(failure, queue: [], completion: $0) }
        #expect(seq == 3)
        #expect(try await fixture.database.integers("SELECT state FROM messages") == [Int64(MessageState.aborted.rawValue)])
        #expect(try await fixture.database.integers("SELECT seq FROM events WHERE kind = 1 AND run_id = '\(runID)'") == [3])
        #expect(try await fixture.database.integers("SELECT ended_seq FROM messages") == [3])
        #expect(try await fixture.database.integers("SELECT updated_ms FROM conversations") == [5_000])
        #expect(try await fixture.database.integers("SELECT count(*) FROM turns") == [0])
        await fixture.stop()
    }

    /// Every write announces the seqs it took on `clawrelay_log`, at commit.
    @Test func announcesWhatItWrote() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let heard = Recorder<StreamPosition>()
        let listener = PostgresListener(settings: fixture.database.settings, nodeID: "other", logger: fixture.database.logger) { positions, source in
            if case .notification = source { for position in positions { heard.append(position) } }
        }
        listener.follow(["u1": 0])
        listener.start()
        try await eventually("listening") { listener.counters.resyncs >= 1 }
        let acceptance = try await awaiting { journal.accept(Self.message(client: "m1"), now: 1_000, queue: [], completion: $0) }
        guard case .fresh(_, let runID, let answer) = acceptance else {
            Issue.record("not fresh")
            return
        }
        _ = try await awaiting { journal.note(userID: "u1", conversationID: "c1", content: "a note", now: 1_500, queue: [], completion: $0) }
        let turn = TurnRef(runID: runID, deviceID: "d1", clientID: "m1")
        _ = try await awaiting {
            journal.finish(turn, userID: "u1", conversationID: "c1", eventID: answer.id, content: "hi", now: 2_000, queue: [], completion: $0)
        }
        try await eventually("three positions") { heard.all.count >= 3 }
        #expect(heard.all.map(\.description) == ["u1:0:2", "u1:2:3", "u1:3:4"])
        await listener.stop()
        await fixture.stop()
    }
}

@Suite(.timeLimit(.minutes(1))) struct PostgresRestartTests {
    /// A single node's start fails every turn the last stop cut off, each at a fresh seq with a
    /// failure event; finished turns stay as they are.
    @Test func failsTheTurnsTheLastStopCutOff() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        var runs: [String] = []
        for client in ["m1", "m2"] {
            let acceptance = try await awaiting {
                journal.accept(PostgresMessageJournalTests.message(client: client), now: 1_000, queue: [], completion: $0)
            }
            guard case .fresh(_, let runID, _) = acceptance else { throw FixtureError("not fresh") }
            runs.append(runID)
        }
        _ = try await awaiting {
            journal.finish(
                TurnRef(runID: runs[0], deviceID: "d1", clientID: "m1"),
                userID: "u1",
                conversationID: "c1",
                eventID: "answer-1",
                content: "done",
                now: 2_000,
                queue: [],
                completion: $0
            )
        }
        let connection = try await fixture.database.connect()
        let failed = try await PostgresMessageQueries.failActive(connection, at: 3_000, logger: fixture.database.logger)
        try await connection.close()
        #expect(failed.map(\.clientID) == ["m2"])
        #expect(try await fixture.database.strings("SELECT reason FROM messages WHERE client_id = 'm2' AND state = 2") == ["the relay restarted"])
        #expect(try await fixture.database.integers("SELECT seq FROM events WHERE kind = 1") == [6])
        #expect(try await fixture.database.integers("SELECT state FROM messages WHERE client_id = 'm1'") == [0])
        await fixture.stop()
    }
}

@Suite(.timeLimit(.minutes(1))) struct PostgresJournalLogReadTests {
    /// What the journal writes, another node reads back from the log as it was handed out here:
    /// the core's times, the turn of a message and its answer, a note as a note.
    @Test func anotherNodeReadsTheJournalsWritesAsWritten() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let acceptance = try await awaiting {
            journal.accept(PostgresMessageJournalTests.message(client: "m1"), now: 1_000, queue: [], completion: $0)
        }
        guard case .fresh(let question, let runID, let answer) = acceptance else { throw FixtureError("not fresh") }
        let final = try await awaiting {
            journal.finish(
                TurnRef(runID: runID, deviceID: "d1", clientID: "m1"),
                userID: "u1",
                conversationID: "c1",
                eventID: answer.id,
                content: "hi",
                now: 2_000,
                queue: [],
                completion: $0
            )
        }
        let note = try await awaiting { journal.note(userID: "u1", conversationID: "c1", content: "n", now: 3_000, queue: [], completion: $0) }
        let reader = PostgresClusterJournal(
            settings: fixture.database.settings,
            nodeID: "n2",
            executor: ImmediateExecutor(),
            logger: fixture.database.logger
        )
        let entries = try await awaiting { reader.streamEntries("u1", after: 0, through: 10, limit: 10, completion: $0) }
        #expect(entries == [.message(question), .message(final), .message(note)])
        await reader.close()
        await fixture.stop()
    }
}
