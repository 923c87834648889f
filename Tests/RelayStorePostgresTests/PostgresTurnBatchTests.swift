import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// The journal's turn writes queued together go out as one `relay_turn_writes` call: one
/// transaction, each write judged as it would be alone, in submission order.
@Suite(.timeLimit(.minutes(1))) struct PostgresTurnBatchTests {
    static let phone = QueueTarget(deviceID: "phone", ttlMillis: 60_000, capacity: 10)

    /// Every outcome in one batch: a fresh accept, its retry (a duplicate of what the same batch
    /// stored), other content under its client id (a mismatch), a protocol's rejection, a missing
    /// asset, the answer, a failure the answer fenced, and a note. One transaction stores them
    /// (the rows share their `xmin`), and the queue gets the three events in stream order.
    @Test func mixedWritesInOneCallKeepTheirOwnOutcomes() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let message = UserMessage(conversationID: "c1", userID: "u1", deviceID: "d1", clientID: "m1", runID: "r1", content: "hello")
        var other = message
        other.content = "other"
        let rejected = UserMessage(
            conversationID: "c1",
            userID: "u1",
            deviceID: "d1",
            clientID: "m2",
            content: "x",
            rejection: FixtureError("too big")
        )
        let withAsset = UserMessage(conversationID: "c1", userID: "u1", deviceID: "d1", clientID: "m3", content: "see", assetIDs: ["a_nobody"])
        let turn = TurnRef(runID: "r1", deviceID: "d1", clientID: "m1")
        let failure = TurnFailure(turn: turn, conversationID: "c1", userID: "u1", cause: .failed, reason: "late", timestampMillis: 4)

        let outcomes = Recorder<String>()
        fixture.writer.gather {
            for candidate in [message, message, other, rejected, withAsset] {
                journal.accept(candidate, now: 1, queue: [Self.phone]) { outcomes.append(Self.describe($0)) }
            }
            journal.finish(turn, userID: "u1", conversationID: "c1", eventID: "e_answer", content: "hi", now: 2, queue: [Self.phone]) {
                outcomes.append((try? $0.get()).map { "answer \($0.seq)" } ?? "answer failed")
            }
            journal.fail(failure, queue: [Self.phone]) { outcomes.append(Self.describe($0)) }
            journal.note(userID: "u1", conversationID: "c1", content: "note", now: 3, queue: [Self.phone]) {
                outcomes.append((try? $0.get()).map { "note \($0.seq)" } ?? "note failed")
            }
        }
        await awaitingDone { journal.barrier($0) }
        #expect(
            outcomes.all == [
                "fresh 1 slot 2", "duplicate active slot 2", "mismatch", "rejected", "missing asset a_nobody", "answer 3",
                "fenced", "note 4",
            ]
        )
        #expect(try await fixture.database.integers("SELECT count(DISTINCT xmin::text) FROM events") == [1], "one transaction")
        let queued = try await awaiting { journal.queued(deviceID: "phone", conversations: nil, now: 5, completion: $0) }
        #expect(queued.compactMap { if case .message(let event) = $0.item { event.seq } else { nil } } == [Int64(1), 3, 4])
        #expect(try await fixture.database.integers("SELECT seq FROM read_cursors WHERE user_id = 'u1'") == [], "reads are the readers'")
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    /// A write that breaks inside a batch rolls the batch back, and each write is then tried
    /// alone: only the broken one fails.
    @Test func aBrokenWriteFailsAloneAndTheRestAreStored() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        // A taken event id makes the second note's insert fail.
        _ = try await awaiting {
            journal.accept(
                UserMessage(conversationID: "c1", userID: "u1", deviceID: "d1", clientID: "m0", content: "a"),
                now: 1,
                queue: [],
                completion: $0
            )
        }
        let taken = try await fixture.database.strings("SELECT id FROM events")[0]
        let outcomes = Recorder<String>()
        fixture.writer.gather {
            journal.accept(UserMessage(conversationID: "c1", userID: "u1", deviceID: "d1", clientID: "m1", content: "b"), now: 2, queue: []) {
                outcomes.append(Self.describe($0))
            }
            let turn = TurnRef(runID: "none", deviceID: "d9", clientID: "x")
            journal.finish(turn, userID: "u1", conversationID: "c1", eventID: taken, content: "dup", now: 3, queue: []) {
                outcomes.append(Self.describe($0.map(\.seq)))
            }
            journal.accept(UserMessage(conversationID: "c1", userID: "u1", deviceID: "d1", clientID: "m2", content: "c"), now: 4, queue: []) {
                outcomes.append(Self.describe($0))
            }
        }
        await awaitingDone { journal.barrier($0) }
        #expect(outcomes.all == ["fresh 3 slot 4", "rejected by PostgreSQL", "fresh 5 slot 6"])
        await fixture.stop()
    }

    static func describe(_ result: Result<Int64, any Error>) -> String {
        switch result {
        case .success(let seq): "failure \(seq)"
        case .failure(let error) where error is TurnFenced: "fenced"
        case .failure(let error as PostgresStoreError) where error.code == .rejected: "rejected by PostgreSQL"
        case .failure(let error): "error \(error)"
        }
    }

    static func describe(_ result: Result<Acceptance, any Error>) -> String {
        switch result {
        case .success(.fresh(let event, _, let answer)): "fresh \(event.seq) slot \(answer.seq)"
        case .success(.duplicate(let state, _, let answer)): "duplicate \(state) slot \(answer?.seq ?? 0)"
        case .success(.mismatch): "mismatch"
        case .success(.rejected): "rejected"
        case .success(.missingAsset(let asset)): "missing asset \(asset)"
        case .failure(let error): "error \(error)"
        }
    }
}
