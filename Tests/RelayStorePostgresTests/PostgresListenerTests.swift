import PostgresNIO
import RelayCore
import Synchronization
import Testing

@testable import RelayStorePostgres

@Suite(.timeLimit(.minutes(1))) struct PostgresListenerTests {
    @Test func reportsTheCommittedPositions() async throws {
        let database = try await TestDatabase()
        let reports = Recorder<([StreamPosition], PostgresListener.Source)>()
        let listener = PostgresListener(settings: database.settings, nodeID: "n1", logger: database.logger) { reports.append(($0, $1)) }
        listener.follow(["u1": 0])
        listener.start()
        try await eventually("the first resync") { listener.counters.resyncs >= 1 }
        let writer = database.writer(for: NodeIncarnation(node: "n2"))
        _ = try await writer.accept(request(client: "m1")).get()
        let expected = StreamPosition(stream: "u1", prev: 0, last: 2)
        try await eventually("the notification") { reports.all.contains { $0.0 == [expected] && $0.1 == .notification } }
        await writer.stop()
        await listener.stop()
    }

    /// A node's own writer's commits are noted and not reported as notifications (the writer hands
    /// them out); another node's are. (A resync that runs between an own commit and its NOTIFY
    /// may still report it: the core's follower then reads what it had delivered, and drops it.)
    @Test func leavesTheNodesOwnCommitsToItsWriter() async throws {
        let database = try await TestDatabase()
        let reports = Recorder<([StreamPosition], PostgresListener.Source)>()
        let mine = database.writer(for: NodeIncarnation(node: "n1"))
        let listener = PostgresListener(
            settings: database.settings,
            nodeID: "n1",
            resyncInterval: .milliseconds(50),
            own: mine.ownBackends,
            logger: database.logger
        ) {
            reports.append(($0, $1))
        }
        listener.follow(["u1": 0, "u2": 0])
        listener.start()
        try await eventually("the first resync") { listener.counters.resyncs >= 1 }
        _ = try await mine.accept(request(user: "u1", client: "m1")).get()
        let other = database.writer(for: NodeIncarnation(node: "n2"))
        _ = try await other.accept(request(user: "u2", client: "m2")).get()
        try await eventually("the other node's notification") { reports.all.contains { $0.0 == [StreamPosition(stream: "u2", prev: 0, last: 2)] } }
        try await eventually("its own notification, noted") { listener.counters.own == 1 }
        #expect(!reports.all.contains { $0.1 == .notification && $0.0.contains { $0.stream == "u1" } }, "\(reports.all)")
        await mine.stop()
        await other.stop()
        await listener.stop()
    }

    /// The listener's session is terminated; a commit lands while it is away (its notification is
    /// lost); once it reconnects, its resync reports the stream's move.
    @Test func resyncsAfterItsSessionIsTerminated() async throws {
        let database = try await TestDatabase()
        let reports = Recorder<([StreamPosition], PostgresListener.Source)>()
        let gate = Mutex((reconnecting: false, open: false))
        let settings = database.settings
        let logger = database.logger
        let listener = PostgresListener(
            connect: { attempt in
                if attempt > 1 {
                    gate.withLock { $0.reconnecting = true }
                    try await eventually("the test to open the gate") { gate.withLock { $0.open } }
                }
                let configuration = try settings.configuration(applicationName: "clawrelay:n1:listener")
                return try await PostgresConnection.connect(configuration: configuration, id: attempt, logger: logger)
            },
            resyncInterval: .seconds(60),
            logger: database.logger,
            report: { reports.append(($0, $1)) }
        )
        listener.follow(["u1": 0])
        listener.start()
        try await eventually("the first resync") { listener.counters.resyncs == 1 }
        let writer = database.writer(for: NodeIncarnation(node: "n2"))
        _ = try await writer.accept(request(client: "m1")).get()
        try await eventually("the first notification") { reports.all.count == 1 }

        #expect(try await database.terminate("clawrelay:n1:listener") == 1)
        try await eventually("the reconnect attempt") { gate.withLock { $0.reconnecting } }
        _ = try await writer.accept(request(client: "m2")).get()
        gate.withLock { $0.open = true }
        try await eventually("the resync after the reconnect") { listener.counters.resyncs == 2 && reports.all.count == 2 }
        #expect(reports.all.last?.0 == [StreamPosition(stream: "u1", prev: 2, last: 4)])
        #expect(reports.all.last?.1 == .resync)
        #expect(listener.counters.reconnects == 1)
        await writer.stop()
        await listener.stop()
    }

    /// With no notification at all, the timed resync still finds what moved.
    @Test func resyncsOnATimer() async throws {
        let database = try await TestDatabase()
        let reports = Recorder<([StreamPosition], PostgresListener.Source)>()
        let listener = PostgresListener(settings: database.settings, nodeID: "n1", resyncInterval: .milliseconds(50), logger: database.logger) {
            reports.append(($0, $1))
        }
        listener.follow(["quiet": 0])
        listener.start()
        try await eventually("the first resync") { listener.counters.resyncs >= 1 }
        // Moved by hand, without a NOTIFY: only a resync can see it.
        _ = try await database.integers("INSERT INTO streams (stream_id, last) VALUES ('quiet', 5) RETURNING last")
        try await eventually("the timed resync") {
            reports.all.contains { $0.0 == [StreamPosition(stream: "quiet", prev: 0, last: 5)] && $0.1 == .resync }
        }
        await listener.stop()
    }
}
