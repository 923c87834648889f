import RelayCore
import Testing

@testable import RelayStorePostgres

@Suite(.timeLimit(.minutes(1))) struct PostgresClusterJournalTests {
    /// A stream's log read by range: user messages and answers with their turns, a failure as a
    /// failure, answer slots left out, in seq order, at most `limit`; heads with 0 for the unknown.
    @Test func readsEntriesByRangeAndHeads() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "n1") { nodes in
            let writer = database.writer(for: nodes[0].identity)
            let first = request(client: "m1", content: "first", attachments: #"[{"id": "a1"}]"#)
            let second = request(client: "m2", content: "second")
            for message in [first, second] { _ = try await acceptedRun(writer, message) }
            _ = try await writer.claim("c1").get()
            _ = try await writer.end(TurnEnding(runID: first.runID, .answer(eventID: "answer-1", content: "one"))).get()
            _ = try await writer.claim("c1").get()
            _ = try await writer.end(TurnEnding(runID: second.runID, .failure(reason: "backend failed", aborted: false))).get()
            await writer.stop()

            let journal = PostgresClusterJournal(settings: database.settings, nodeID: "n2", executor: ImmediateExecutor(), logger: database.logger)
            let all = try await journal.entries("u1", after: 0, through: 6, limit: 10)
            #expect(all.map(\.seq) == [1, 3, 5, 6])
            guard case .message(let user) = all[0], case .message(let answer) = all[2], case .failure(let failure, _) = all[3] else {
                Issue.record("unexpected kinds: \(all)")
                await journal.close()
                return
            }
            #expect(user.role == .user && user.content == "first" && user.deviceID == "d1" && user.attachmentsJSON == #"[{"id": "a1"}]"#)
            #expect(user.id == first.userEventID && user.turn == TurnRef(runID: first.runID, deviceID: "d1", clientID: "m1"))
            #expect(answer.role == .assistant && answer.id == "answer-1" && answer.content == "one" && answer.turn?.runID == first.runID)
            #expect(failure.turn == TurnRef(runID: second.runID, deviceID: "d1", clientID: "m2") && failure.reason == "backend failed")
            #expect(failure.cause == .failed && failure.answerID == second.answerEventID && failure.conversationID == "c1")
            #expect(try await journal.entries("u1", after: 1, through: 6, limit: 2).map(\.seq) == [3, 5])
            #expect(try await journal.entries("u1", after: 1, through: 4, limit: 10).map(\.seq) == [3])
            #expect(try await journal.entries("u1", after: 6, through: 9, limit: 10).isEmpty)
            #expect(try await journal.heads(["u1", "nobody"]) == ["u1": 6, "nobody": 0])
            await journal.close()
        }
    }
}

extension PostgresClusterJournal {
    func entries(_ stream: String, after: Int64, through: Int64, limit: Int) async throws -> [StreamEntry] {
        try await withCheckedThrowingContinuation { continuation in
            streamEntries(stream, after: after, through: through, limit: limit) { continuation.resume(with: $0) }
        }
    }

    func heads(_ streams: [String]) async throws -> [String: Int64] {
        try await withCheckedThrowingContinuation { continuation in streamHeads(streams) { continuation.resume(with: $0) } }
    }
}

/// A node's stream heads are read on its writer, in order with its writes and its replays.
@Suite(.timeLimit(.minutes(1))) struct PostgresOrderedHeadsTests {
    /// A head asked for between two writes sees the first and not the second: a socket's follower
    /// asks before its replay is read, so the head is never newer than the replay.
    @Test func aHeadIsReadInTheWritersOrder() async throws {
        let fixture = try await JournalFixture()
        let heads = PostgresClusterJournal(
            settings: fixture.database.settings,
            nodeID: "n1",
            executor: ImmediateExecutor(),
            writer: fixture.writer,
            logger: fixture.database.logger
        )
        let seen = Recorder<Int64>()
        fixture.writer.gather {
            for client in ["m1", "m2"] {
                let message = UserMessage(conversationID: "c1", userID: "u1", deviceID: "d1", clientID: client, content: client)
                fixture.journal.accept(message, now: 1, queue: []) { _ in }
                if client == "m1" { heads.streamHeads(["u1"]) { seen.append((try? $0.get())?["u1"] ?? -1) } }
            }
        }
        await awaitingDone { fixture.journal.barrier($0) }
        #expect(seen.all == [2], "after the first accept (seqs 1-2), before the second (3-4)")
        await heads.close()
        await fixture.stop()
    }
}
