import RelayCore
import Testing

@testable import RelayStorePostgres

@Suite(.timeLimit(.minutes(1))) struct PostgresFabricTests {
    /// What a fabric's handlers heard, each with whether it ran on the loop.
    final class Heard: Sendable {
        let positions = Recorder<([StreamPosition], Bool)>()
        let live = Recorder<(BusEvent, String, Bool)>()
        let control = Recorder<(ClusterControl, Bool)>()
    }

    /// A started fabric for `node` on a loop of its own, its handlers recording into the result.
    private func fabric(_ database: TestDatabase, _ node: String) async throws -> (PostgresFabric, Heard) {
        let loop = QueueLoop()
        let fabric = PostgresFabric(settings: database.settings, node: node, executor: loop, logger: database.logger)
        let heard = Heard()
        await loop.run { [fabric] in
            fabric.receive(
                positions: { heard.positions.append(($0, loop.isOnLoop)) },
                live: { heard.live.append(($0, $1, loop.isOnLoop)) },
                control: { heard.control.append(($0, loop.isOnLoop)) }
            )
        }
        fabric.start()
        try await eventually("\(node) listening") { fabric.listenerCounters.resyncs >= 1 }
        return (fabric, heard)
    }

    /// A live event and a request node A sends reach node B's handlers on B's loop, in order; A's
    /// own do not come back to A (B's reply, sent after, reaches A alone).
    @Test func carriesLiveEventsAndRequestsToTheOtherNodes() async throws {
        let database = try await TestDatabase()
        let (a, heardByA) = try await fabric(database, "a")
        let (b, heardByB) = try await fabric(database, "b")
        let turn = TurnRef(runID: "r1", deviceID: "d1", clientID: "m1")
        let progress = BusEvent.streaming(TurnProgress(turn: turn, eventID: "e1", conversationID: "c1", content: "so far", startedAt: 1))
        let abort = ClusterControl.abort(conversationID: "c1", runID: "r1", reason: "stopped from another node")
        a.sendLive(progress, stream: "u1")
        a.sendLive(.assistantTyping(conversationID: "c1", active: false), stream: "u1")
        a.send(abort)
        try await eventually("B hears A") { heardByB.live.all.count == 2 && heardByB.control.all.count == 1 }
        #expect(heardByB.live.all.map(\.0) == [progress, .assistantTyping(conversationID: "c1", active: false)])
        #expect(heardByB.live.all.allSatisfy { $0.1 == "u1" && $0.2 })
        #expect(heardByB.control.all.map(\.0) == [abort] && heardByB.control.all.allSatisfy { $0.1 })

        b.sendLive(.assistantTyping(conversationID: "c9", active: true), stream: "u9")
        try await eventually("A hears B") { !heardByA.live.all.isEmpty }
        #expect(heardByA.live.all.map(\.0) == [.assistantTyping(conversationID: "c9", active: true)])
        #expect(heardByA.control.all.isEmpty)
        try await eventually("A's sends counted") { a.counters.sent == 3 }
        #expect(a.counters.received == 1 && b.counters.received == 3)
        await a.stop()
        await b.stop()
    }

    /// The positions of another node's commit reach the handler on the loop.
    @Test func reportsCommittedPositionsOnTheLoop() async throws {
        let database = try await TestDatabase()
        let (fabric, heard) = try await fabric(database, "b")
        let writer = database.writer(for: NodeIncarnation(node: "a"))
        _ = try await acceptedRun(writer, request(client: "m1"))
        let expected = StreamPosition(stream: "u1", prev: 0, last: 2)
        try await eventually("the commit's positions") { heard.positions.all.contains { $0.0 == [expected] } }
        #expect(heard.positions.all.allSatisfy { $0.1 })
        await writer.stop()
        await fabric.stop()
    }

    /// A burst of progress for one turn: what waits while the sender is busy collapses into the
    /// newest, every update is either sent or counted as replaced, and the other node ends with the
    /// whole text; another turn's progress and other live events are not merged away.
    @Test func coalescesAWaitingTurnsProgressIntoTheNewest() async throws {
        let database = try await TestDatabase()
        let (a, _) = try await fabric(database, "a")
        let (_, heardByB) = try await fabric(database, "b")
        let turn = TurnRef(runID: "r1", deviceID: "d1", clientID: "m1")
        let other = TurnRef(runID: "r2", deviceID: "d1", clientID: "m2")
        func progress(_ turn: TurnRef, _ text: String) -> BusEvent {
            .streaming(TurnProgress(turn: turn, eventID: "e-" + turn.runID, conversationID: "c1", content: text, startedAt: 1))
        }
        let updates = 300
        for count in 1...updates { a.sendLive(progress(turn, String(repeating: "x", count: count)), stream: "u1") }
        a.sendLive(progress(other, "other turn"), stream: "u1")
        a.sendLive(.assistantTyping(conversationID: "c1", active: false), stream: "u1")
        try await eventually("B has the typing-off") { heardByB.live.all.contains { $0.0 == .assistantTyping(conversationID: "c1", active: false) } }
        let texts = heardByB.live.all.compactMap { heard -> String? in
            if case .streaming(let progress) = heard.0, progress.turn == turn { progress.content } else { nil }
        }
        #expect(texts.last?.count == updates, "the newest text arrived")
        #expect(texts.map(\.count) == texts.map(\.count).sorted(), "never an older text after a newer one")
        #expect(heardByB.live.all.contains { $0.0 == progress(other, "other turn") })
        try await eventually("every update sent or replaced") { a.counters.sent + a.counters.coalesced == updates + 2 }
        #expect(a.counters.coalesced > 0, "300 updates queued faster than one NOTIFY each")
        await a.stop()
    }

    /// A live event too big for a NOTIFY is dropped and counted; the next one goes.
    @Test func dropsAndCountsAnOversizedLiveEvent() async throws {
        let database = try await TestDatabase()
        let (a, _) = try await fabric(database, "a")
        let (b, heardByB) = try await fabric(database, "b")
        let turn = TurnRef(runID: "r1", deviceID: "d1", clientID: "m1")
        let big = TurnProgress(turn: turn, eventID: "e1", conversationID: "c1", content: String(repeating: "é", count: 3_950), startedAt: 1)
        a.sendLive(.streaming(big), stream: "u1")
        a.sendLive(.assistantTyping(conversationID: "c1", active: true), stream: "u1")
        try await eventually("B hears the small one") { !heardByB.live.all.isEmpty }
        #expect(heardByB.live.all.map(\.0) == [.assistantTyping(conversationID: "c1", active: true)])
        try await eventually("A's send counted") { a.counters.sent == 1 }
        #expect(a.counters.oversized == 1 && a.counters.sendFailures == 0)
        await a.stop()
        await b.stop()
    }
}
