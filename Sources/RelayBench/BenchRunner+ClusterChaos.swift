import Foundation
import RelayTransport

/// `bench cluster-chaos`: a cluster node killed (-9) while it runs a conversation's turn and
/// another waits behind it on a second node.
extension BenchRunner {
    /// Each round the first node (its echo answers after 3 s) runs a turn of the user's
    /// conversation (its device sees the turn start: a turn only queued there would rightly run on
    /// a survivor), a device on the second node sends the next one, which waits, and the first
    /// node is killed: the second must find it dead, fail its turn and run the waiting one. The
    /// figure is the time from the kill to that answer; the first node then starts again as a new
    /// incarnation. The dead node's turn must never be answered, and no answer may come twice.
    func clusterChaos() throws {
        let ports = (0..<max(2, options.nodes)).map { _ in freeLoopbackPort() }
        let nodes = try startCluster(ports.count, ports: ports, echoDelays: [3_000])
        defer { for node in nodes { node.stop() } }
        let paired = try provision(nodes[0], count: 2, sameUser: true)
        let devices = try reconnect(paired, to: [target(nodes[0]), target(nodes[1])], keeping: [true, false])
        defer { release(devices) }
        let tally = ChaosTally()
        try onLoop {
            devices.value[1].onText = { _, text in tally.heard(text) }
            devices.value[0].onText = { _, text in tally.heardOnFirst(text) }
        }
        var recovery = LatencyRecorder()
        for round in 1...max(1, options.kills) {
            try waitOnLoop(loop, timeout: 60) { (done: @escaping @Sendable (Bool) -> Void) in
                // The held turn runs on the first node (its device sees typing start: the claim
                // committed) and the second node's device saw its message: then the next one goes.
                var pending = 2
                let both = {
                    pending -= 1
                    guard pending == 0 else { return }
                    tally.expect(ackOf: "c_next\(round)") { done(true) }
                    devices.value[1].send(messageFrame(id: "c_next\(round)", content: "next-\(round)"))
                }
                tally.expect(echoOf: "hold-\(round)", then: both)
                tally.expectTypingOnFirst(then: both)
                devices.value[0].send(messageFrame(id: "c_hold\(round)", content: "hold-\(round)"))
            }
            let killed = nowMicros()
            nodes[0].kill()
            let answered: UInt64 = try waitOnLoop(loop, timeout: 60) { done in tally.expect(finalOf: "next-\(round)") { done(nowMicros()) } }
            recovery.record(answered - killed)
            progress("cluster-chaos: kill \(round)/\(options.kills): the waiting turn answered \((answered - killed) / 1000) ms after the kill")
            try nodes[0].start()
            try reauthenticate(UncheckedBox([devices.value[0]]))
        }
        let counts: ChaosTally.Counts = try waitOnLoop(loop, timeout: 30) { done in done(tally.counts) }
        report.add("cluster-chaos", "nodes", Double(nodes.count), "relays on one PostgreSQL")
        report.add("cluster-chaos", "kills", Double(max(1, options.kills)), "kill -9 of a node running a turn")
        for (key, value) in recovery.summary("kill_to_next_answer").sorted(by: { $0.key < $1.key }) {
            report.add("cluster-chaos", key, value, "ms")
        }
        for node in nodes { node.stop() }
        try clusterChaosUnderLoad()
        report.add("cluster-chaos", "dead_turns_answered", Double(counts.deadAnswered), "answers of a killed node's turn")
        report.add("cluster-chaos", "answers_twice", Double(counts.repeated), "answers seen more than once")
        if counts.deadAnswered + counts.repeated > 0 {
            report.notes.append("cluster-chaos: a killed node's turn was answered or an answer came twice")
        }
    }
}

extension BenchRunner {
    /// Roundtrip load from `--devices` devices (a user each) spread over the nodes of a fresh
    /// cluster; half way through `--seconds` the first node is killed (-9), the load runs on to
    /// the end on the others, and the node starts again. Then every device reads its whole history:
    /// every message a node acknowledged must be there, and no answer twice.
    fileprivate func clusterChaosUnderLoad() throws {
        let ports = (0..<max(2, options.nodes)).map { _ in freeLoopbackPort() }
        let nodes = try startCluster(ports.count, ports: ports, replayCap: 1_000_000)
        defer { for node in nodes { node.stop() } }
        let paired = try provision(nodes[0], count: options.devices, sameUser: false)
        let placed = paired.value.indices.map { $0 % nodes.count }
        let devices = try reconnect(paired, to: placed.map { target(nodes[$0]) }, keeping: placed.map { $0 == 0 })
        defer { release(devices) }
        let half = max(0.5, options.seconds / 2)
        progress("cluster-chaos: load from \(options.devices) devices on \(nodes.count) nodes; node 1 killed after \(half) s")
        let load = startLoad(devices, seconds: half * 2, prefix: "load")
        usleep(UInt32(half * 1_000_000))
        nodes[0].kill()
        guard let result = load(half + 60) else { throw BenchError("cluster-chaos: the load did not end") }
        try nodes[0].start()
        try reauthenticate(UncheckedBox(devices.value.indices.filter { placed[$0] == 0 }.map { devices.value[$0] }))
        let history = try collectHistory(devices)
        let found = Set(history.users)
        let lost = result.ackedContents.filter { !found.contains($0) }
        let answers = Dictionary(history.answers.map { ($0, 1) }, uniquingKeysWith: +)
        let twice = answers.values.filter { $0 > 1 }.count
        let seenTwice = Dictionary(history.users.map { ($0, 1) }, uniquingKeysWith: +).values.filter { $0 > 1 }.count
        report.add("cluster-chaos", "load_acknowledged", Double(result.ackedContents.count), "messages acknowledged under load")
        report.add("cluster-chaos", "load_lost", Double(lost.count), "acknowledged messages missing from the history")
        let unanswered = result.ackedContents.filter { answers["echo: \($0)"] == nil }.count
        report.add("cluster-chaos", "load_answered", Double(answers.count), "messages answered (also ones whose acknowledgement the kill cut off)")
        report.add("cluster-chaos", "load_unanswered", Double(unanswered), "acknowledged, not answered (failed with their node)")
        report.add("cluster-chaos", "load_answered_twice", Double(twice), "messages with two answers in the history")
        report.add("cluster-chaos", "load_stored_twice", Double(seenTwice), "messages twice in the history")
        if lost.count + twice + seenTwice > 0 {
            report.notes.append("cluster-chaos: under load \(lost.count) acknowledged lost, \(twice) answered twice, \(seenTwice) stored twice")
        }
    }
}

/// What the surviving node's device heard, and the waits of a round (generator loop only).
private final class ChaosTally: @unchecked Sendable {
    private var finals: [String: Int] = [:]
    private var waits: [(matches: (String) -> Bool, then: () -> Void)] = []
    private var typingWaits: [() -> Void] = []

    struct Counts: Sendable {
        var deadAnswered: Int
        var repeated: Int
    }

    var counts: Counts {
        Counts(deadAnswered: finals.filter { $0.key.hasPrefix("echo: hold-") }.count, repeated: finals.values.filter { $0 > 1 }.count)
    }

    func heard(_ text: String) {
        if FrameSniffer.isAssistantFinal(text), let content = FrameSniffer.string("content", in: text) { finals[content, default: 0] += 1 }
        if let index = waits.firstIndex(where: { $0.matches(text) }) { waits.remove(at: index).then() }
    }

    /// What the first node's device heard: only whether a turn started there (typing on).
    func heardOnFirst(_ text: String) {
        guard FrameSniffer.contains(text, "\"type\":\"typing\""), FrameSniffer.contains(text, "\"active\":true") else { return }
        typingWaits.popLast()?()
    }

    func expectTypingOnFirst(then: @escaping () -> Void) { typingWaits = [then] }

    func expect(echoOf content: String, then: @escaping () -> Void) {
        waits.append(({ FrameSniffer.isUserEcho($0) && FrameSniffer.string("content", in: $0) == content }, then))
    }

    func expect(ackOf id: String, then: @escaping () -> Void) {
        waits.append(({ FrameSniffer.isAck($0) && FrameSniffer.string("id", in: $0) == id }, then))
    }

    func expect(finalOf content: String, then: @escaping () -> Void) {
        if finals["echo: \(content)", default: 0] > 0 { return then() }
        waits.append(({ FrameSniffer.isAssistantFinal($0) && FrameSniffer.string("content", in: $0) == "echo: \(content)" }, then))
    }
}
