import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// The notification queues of devices out of the foreground, on PostgreSQL.
@Suite(.timeLimit(.minutes(1))) struct PostgresQueueJournalTests {
    static let phone = QueueTarget(deviceID: "phone", ttlMillis: 10_000, capacity: 3)

    static func accept(
        _ journal: PostgresJournal,
        _ client: String,
        conversation: String = "c1",
        now: Int64,
        queue: [QueueTarget]
    ) async throws
        -> (ChatEvent, String)
    {
        let message = UserMessage(conversationID: conversation, userID: "u1", deviceID: "d1", clientID: client, content: client, attachmentsJSON: nil)
        let acceptance = try await awaiting { journal.accept(message, now: now, queue: queue, completion: $0) }
        guard case .fresh(let event, let runID, _) = acceptance else { throw FixtureError("not fresh: \(acceptance)") }
        return (event, runID)
    }

    /// What a write queues for a target comes back in stream order with its queue time, only for
    /// the conversations asked for; delivered entries go; expired ones are not handed out and a
    /// purge removes them.
    @Test func queuesInStreamOrderUntilDeliveredOrExpired() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let (first, _) = try await Self.accept(journal, "m1", now: 1_000, queue: [Self.phone])
        let (second, _) = try await Self.accept(journal, "m2", conversation: "c2", now: 2_000, queue: [Self.phone])
        let note = try await awaiting {
            journal.note(userID: "u1", conversationID: "c1", content: "n", now: 3_000, queue: [Self.phone], completion: $0)
        }
        let queued = try await awaiting { journal.queued(deviceID: "phone", conversations: nil, now: 4_000, completion: $0) }
        #expect(queued.map(\.item) == [.message(first), .message(second), .message(note)])
        #expect(queued.map(\.queuedAt) == [1_000, 2_000, 3_000])
        let onlyC2 = try await awaiting { journal.queued(deviceID: "phone", conversations: ["c2"], now: 4_000, completion: $0) }
        #expect(onlyC2.map(\.item) == [.message(second)])
        #expect(try await awaiting { journal.queued(deviceID: "phone", conversations: [], now: 4_000, completion: $0) }.isEmpty)
        #expect(try await awaiting { journal.queued(deviceID: "tablet", conversations: nil, now: 4_000, completion: $0) }.isEmpty)

        await awaitingDone { journal.dequeue(deviceID: "phone", ids: [queued[0].id], completion: $0) }
        let later = try await awaiting { journal.queued(deviceID: "phone", conversations: nil, now: 12_500, completion: $0) }
        #expect(later.map(\.item) == [.message(note)], "the first was delivered, the second expired at 12,000")
        journal.purgeQueues(now: 12_500)
        await awaitingDone { journal.barrier($0) }
        #expect(try await fixture.database.integers("SELECT count(*) FROM queue_entries") == [1])
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    /// A device keeps its newest `capacity` entries; the oldest go first.
    @Test func keepsTheNewestUpToCapacity() async throws {
        let fixture = try await JournalFixture()
        var events: [ChatEvent] = []
        for index in 0..<5 { events.append(try await Self.accept(fixture.journal, "m\(index)", now: 1_000, queue: [Self.phone]).0) }
        let queued = try await awaiting { fixture.journal.queued(deviceID: "phone", conversations: nil, now: 2_000, completion: $0) }
        #expect(queued.map(\.item) == events.suffix(3).map { .message($0) })
        await fixture.stop()
    }

    /// An event stored before is queued later at its own place in the stream: a failure read later
    /// comes after the message it failed, before anything stored after it. (A failure names its
    /// answer's placeholder, as the core's do: the queue reads it back from the log.)
    @Test func queuesAStoredEventAtItsPlace() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let message = UserMessage(conversationID: "c1", userID: "u1", deviceID: "d1", clientID: "m1", content: "m1", attachmentsJSON: nil)
        let acceptance = try await awaiting { journal.accept(message, now: 1_000, queue: [], completion: $0) }
        guard case .fresh(let event, let runID, let answer) = acceptance else { throw FixtureError("not fresh: \(acceptance)") }
        let failure = TurnFailure(
            turn: TurnRef(runID: runID, deviceID: "d1", clientID: "m1"),
            conversationID: "c1",
            userID: "u1",
            cause: .failed,
            reason: "backend down",
            timestampMillis: 2_000,
            answerID: answer.id
        )
        _ = try await awaiting { journal.fail(failure, queue: [], completion: $0) }
        let (later, _) = try await Self.accept(journal, "m2", now: 3_000, queue: [Self.phone])
        journal.enqueue(.failure(failure), now: 4_000, queue: [Self.phone])
        journal.enqueue(.message(event), now: 4_000, queue: [Self.phone])
        let queued = try await awaiting { journal.queued(deviceID: "phone", conversations: nil, now: 5_000, completion: $0) }
        #expect(queued.map(\.item) == [.message(event), .failure(failure), .message(later)])
        await fixture.stop()
    }
}
