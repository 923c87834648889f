import PostgresNIO
import RelayCore
import Testing

@testable import RelayStorePostgres

@Suite(.timeLimit(.minutes(1))) struct PostgresWriterTests {
    @Test func acceptsFreshThenDuplicateThenMismatch() async throws {
        let database = try await TestDatabase()
        let writer = database.writer(for: NodeIncarnation(node: "n1"))
        let first = request(client: "m1")
        let fresh = try await writer.accept(first).get()
        guard case .fresh(let runID, let userEventID, let userSeq, let answer, let position) = fresh else {
            Issue.record("expected a fresh accept, got \(fresh)")
            return
        }
        #expect(runID == first.runID && userEventID == first.userEventID)
        #expect(userSeq == 1 && answer == AnswerSlot(id: first.answerEventID, seq: 2))
        #expect(position == StreamPosition(stream: "u1", prev: 0, last: 2))

        let retry = try await writer.accept(request(client: "m1")).get()
        #expect(retry == .duplicate(.active, runID: runID, answer: answer))
        #expect(try await writer.accept(request(client: "m1", content: "other")).get() == .mismatch)
        #expect(try await database.integers("SELECT count(*) FROM events") == [1])
        #expect(try await database.integers("SELECT order_seq FROM turns WHERE state = 0") == [1])
        #expect(try await database.integers("SELECT last FROM streams WHERE stream_id = 'u1'") == [2])
        await writer.stop()
    }

    /// One batch with several accepts on one stream: each reports its own `(prev, last]`, they
    /// tile the stream's seqs, and the batch's one NOTIFY carries each stream's whole range.
    @Test func reportsContiguousPositionsAcrossABatch() async throws {
        let database = try await TestDatabase()
        let payloads = Recorder<String>()
        let listening = try await NotificationTap.start(database, into: payloads)
        let writer = database.writer(for: NodeIncarnation(node: "n1"))
        let results = Recorder<PostgresAcceptance>()
        writer.gather {
            for index in 0..<5 { writer.accept(request(client: "a\(index)")) { results.append(try! $0.get()) } }
            for index in 0..<2 { writer.accept(request(user: "u2", conversation: "c2", client: "b\(index)")) { results.append(try! $0.get()) } }
        }
        try await eventually("7 accepts") { results.all.count == 7 }
        let positions = results.all.flatMap(\.positions)
        #expect(positions.filter { $0.stream == "u1" }.map { [$0.prev, $0.last] } == [[0, 2], [2, 4], [4, 6], [6, 8], [8, 10]])
        #expect(positions.filter { $0.stream == "u2" }.map { [$0.prev, $0.last] } == [[0, 2], [2, 4]])
        try await eventually("the batch's notification") { !payloads.all.isEmpty }
        #expect(NotificationTap.positions(payloads) == ["u1:0:10;u2:0:4"])
        #expect(try await database.integers("SELECT seq FROM events WHERE stream_id = 'u1' ORDER BY seq") == [1, 3, 5, 7, 9])
        await writer.stop()
        try await listening.close()
    }

    /// A batch touching many long-named streams notifies in pieces of at most 7,900 bytes, exactly
    /// as `StreamPosition.payloads` splits them.
    @Test func splitsTheNotificationAt7900Bytes() async throws {
        let database = try await TestDatabase()
        let payloads = Recorder<String>()
        let listening = try await NotificationTap.start(database, into: payloads)
        let writer = database.writer(for: NodeIncarnation(node: "n1"))
        let streams = (0..<60).map { "stream-\($0)-" + String(repeating: "x", count: 200) }
        let done = Recorder<Bool>()
        writer.gather {
            for stream in streams { writer.accept(request(user: stream, client: stream)) { done.append((try? $0.get()) != nil) } }
        }
        try await eventually("60 accepts") { done.all.count == 60 }
        #expect(done.all.allSatisfy { $0 })
        try await eventually("both pieces") { payloads.all.count == 2 }
        // Each piece starts with the writer's backend, and is at most 7,900 bytes with it.
        let origin = payloads.all[0].prefix { $0 != ";" } + ";"
        #expect(payloads.all.allSatisfy { $0.hasPrefix(origin) && $0.utf8.count <= 7_900 })
        let positions = streams.map { StreamPosition(stream: $0, prev: 0, last: 2) }
        #expect(NotificationTap.positions(payloads) == StreamPosition.payloads(positions, maxBytes: 7_900 - origin.utf8.count))
        #expect(NotificationTap.positions(payloads).flatMap { StreamPosition.parse(payload: $0) }.count == 60)
        await writer.stop()
        try await listening.close()
    }

    /// The writer's session is terminated between batches: the next accept either commits on a
    /// new connection or fails; whatever it reports is what the database holds.
    @Test func neverReportsAFalseSuccessWhenTheConnectionDrops() async throws {
        let database = try await TestDatabase()
        let writer = database.writer(for: NodeIncarnation(node: "n1"))
        _ = try await writer.accept(request(client: "before")).get()
        #expect(try await database.terminate("clawrelay:n1:writer") == 1)
        let attempt = request(client: "during")
        let stored = { try await database.integers("SELECT count(*) FROM messages WHERE client_id = 'during'") }
        switch await writer.accept(attempt) {
        case .success(let acceptance):
            #expect(acceptance.positions == [StreamPosition(stream: "u1", prev: 2, last: 4)])
            #expect(try await stored() == [1])
        case .failure(let error):
            #expect(error.code == .connectionLost)
            #expect(try await stored() == [0])
            #expect(try await writer.accept(attempt).get().positions == [StreamPosition(stream: "u1", prev: 2, last: 4)])
        }
        await writer.stop()
    }
}

/// A raw `LISTEN clawrelay_log` on a connection of the test's own, recording payloads as sent.
/// The raw payloads of `clawrelay_log`: each starts with its sender's backend (`@PID;`).
enum NotificationTap {
    /// The payloads' positions, without their sender.
    static func positions(_ payloads: Recorder<String>) -> [String] { payloads.all.map { String(OwnBackends.origin(of: $0).positions) } }

    static func start(_ database: TestDatabase, into payloads: Recorder<String>) async throws -> PostgresConnection {
        let connection = try await database.connect("tap")
        let listening = Recorder<Bool>()
        Task {
            try? await connection.listen(on: PostgresListener.channel) { notifications in
                listening.append(true)
                for try await notification in notifications { payloads.append(notification.payload) }
            }
        }
        try await eventually("LISTEN in place") { !listening.all.isEmpty }
        return connection
    }
}
