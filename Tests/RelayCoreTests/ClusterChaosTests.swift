import RelayCore
import RelayTesting
import Testing

/// Three nodes under random sends, answers, lost and repeated positions, node deaths (the dead
/// node lingers as a zombie that may still answer) and restarts, seeded so a failure replays:
/// every accepted message ends with exactly one answer or failure, no run reaches two backends,
/// never two turns of the conversation run on live nodes at once, and every socket sees the
/// stream in seq order without gaps or duplicates.
@Suite struct ClusterChaosTests {
    /// A small deterministic generator (xorshift), so a seed replays the same run.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
    }

    final class Run {
        let fixture = ClusterFixture(nodes: 3)
        var alive: [Int] = [0, 1, 2]
        /// Each live node's socket, and the user seq its socket starts after.
        var sockets: [Int: (endpoint: RecordingEndpoint, from: Int64)] = [:]
        var accepted: [String] = []
        var sent = 0
        /// A device that keeps a queue (Companion's kind) on node 0, which is never killed: it goes
        /// to the background and back; whatever it misses meanwhile comes from its queue.
        let tablet: RecordingEndpoint
        let tabletFrom: Int64
        var tabletAway = false

        init() {
            tabletFrom = fixture.journal.events.map(\.seq).max() ?? 0
            tablet = fixture.connect("tablet", on: 0, delivery: .queue(ttlMillis: 3_600_000, capacity: 10_000, scheme: nil))
            for node in alive { attach(node) }
        }

        func toggleTablet() {
            tabletAway.toggle()
            fixture.nodes[0].hub.presence.signal(tabletAway ? .backgrounded : .foregrounded, deviceID: "tablet")
            fixture.loop.runUntilIdle()
        }

        func attach(_ node: Int) {
            let from = fixture.journal.events.map(\.seq).max() ?? 0
            sockets[node] = (fixture.connect("dev-\(node)", on: node), from)
        }

        func send(on node: Int) {
            sent += 1
            if fixture.send("m\(sent)", from: "dev-\(node)", on: node) { accepted.append("c_m\(sent)") }
        }

        /// The node's running turn answers (a zombie's answer is fenced).
        func answer(on node: Int) {
            guard let run = fixture.nodes[node].backend.runs.last, !run.isCancelled else { return }
            fixture.emit(.final("re \(run.request.text)"), on: node)
        }

        func kill(_ node: Int, survivor: Int) {
            alive.removeAll { $0 == node }
            sockets.removeValue(forKey: node)
            fixture.drop(node)
            fixture.nodes[survivor].hub.declareDead(fixture.nodes[node].identity)
            fixture.loop.runUntilIdle()
        }

        func restart() {
            let node = fixture.addNode()
            alive.append(node)
            attach(node)
        }

        var runningOnLiveNodes: Int { alive.reduce(0) { $0 + fixture.nodes[$1].hub.turns.activeCount } }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func nothingIsLostRunTwiceOrSeenOutOfOrder(seed: UInt64) {
        var random = Generator(state: 0x9E37_79B9_7F4A_7C15 &* seed)
        let run = Run()
        for _ in 0..<400 {
            let node = run.alive.randomElement(using: &random)!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<35: run.send(on: node)
            case 35..<70: run.answer(on: node)
            case 70..<78: run.fixture.cluster.losePositions.toggle()
            case 78..<84: run.fixture.cluster.repeatPositions.toggle()
            case 84..<90: run.fixture.resync()
            case 90..<92: run.toggleTablet()
            case 92..<96 where run.alive.count > 1 && node != 0:
                let survivor = run.alive.filter { $0 != node }.randomElement(using: &random)!
                run.kill(node, survivor: survivor)
            case 96..<100 where run.alive.count < 3: run.restart()
            default: run.answer(on: Int.random(in: 0..<run.fixture.nodes.count, using: &random))
            }
            #expect(run.runningOnLiveNodes <= 1, "seed \(seed): two turns of one conversation ran at once")
        }
        // Heal: positions flow again, everything still queued gets answered.
        run.fixture.cluster.losePositions = false
        run.fixture.cluster.repeatPositions = false
        for _ in 0..<(run.accepted.count + 3) {
            run.fixture.resync()
            for node in run.alive { run.answer(on: node) }
        }
        run.fixture.resync()
        if run.tabletAway { run.toggleTablet() }
        check(run, seed: seed)
    }

    private func check(_ run: Run, seed: UInt64) {
        let journal = run.fixture.journal
        let records = journal.records.values.filter { run.accepted.contains($0.clientID) }
        #expect(records.count == run.accepted.count)
        #expect(records.allSatisfy { $0.state != .active }, "seed \(seed): every accepted message ended")
        let answers = journal.events.filter { $0.role == .assistant }.compactMap(\.turn?.runID)
        #expect(Set(answers).count == answers.count, "seed \(seed): a run answered twice")
        for record in records {
            let answered = answers.contains(record.runID)
            #expect(answered == (record.state == .finalized), "seed \(seed): \(record.clientID) has one answer or one failure")
        }
        let started = run.fixture.nodes.flatMap { $0.backend.runs.map(\.request.runID) }
        #expect(Set(started).count == started.count, "seed \(seed): a run reached two backends")
        let tabletExpected = journal.events.filter { $0.seq > run.tabletFrom }.map(\.seq).sorted()
        #expect(run.tablet.arrivals.map(\.seq) == tabletExpected, "seed \(seed): the queue device missed, repeated or reordered an event")
        for (node, socket) in run.sockets {
            let expected = journal.events.filter { $0.seq > socket.from }.map(\.seq).sorted()
            #expect(socket.endpoint.seqs == expected, "seed \(seed): node \(node)'s socket saw a gap, a duplicate or a reorder")
        }
    }
}
