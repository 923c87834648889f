import Foundation
import RelayTransport

/// `bench fanout --nodes N`: the relays as N nodes of one cluster on one PostgreSQL database.
extension BenchRunner {
    /// One sender on the first node, the receivers spread over all of them: a delivery to a device
    /// on another node crosses PostgreSQL (the commit's NOTIFY, then a read of the log), one on
    /// the sender's node does not. The difference is what a cluster costs a message's readers.
    func clusterFanout() throws {
        let (nodes, moved, placed) = try spread(options.fanout, sameUser: true, scenario: "fanout")
        defer { for node in nodes { node.stop() } }
        defer { release(moved) }
        progress("fanout: one sender on node 1, \(options.fanout) receivers on \(nodes.count) nodes, \(options.seconds) s")
        let cpu = CPUMeter()
        let relayCPU = nodes.map { RelayCPUMeter($0) }
        let databaseCPU = postgres.map { DatabaseCPUMeter($0) }
        let seconds = options.seconds
        let local = placed.map { $0 == 0 }
        let result: FanoutDriver.Result = try waitOnLoop(loop, timeout: seconds + 120) { done in
            let driver = FanoutDriver(devices: moved.value, durationSeconds: seconds, onSendersNode: local)
            driver.run { result in
                _ = driver
                done(result)
            }
        }
        let used = relayCPU.map(\.used)
        let relaySeconds = used.reduce(0) { $0 + $1.cpu }
        report.add("fanout", "nodes", Double(nodes.count), "relays on one PostgreSQL")
        report.add("fanout", "receivers", Double(options.fanout), "devices")
        report.add("fanout", "messages", Double(result.messages), "count")
        report.add("fanout", "deliveries", result.seconds > 0 ? Double(result.delay.count) / result.seconds : 0, "deliveries/s")
        for (recorder, name) in [(result.sameNode, "same_node"), (result.otherNodes, "other_nodes")] {
            for (key, value) in recorder.summary("delivery_\(name)").sorted(by: { $0.key < $1.key }) { report.add("fanout", key, value, "ms") }
        }
        report.add("fanout", "generator_cpu", cpu.share * 100, "% of one core")
        if let wall = used.first?.wall, wall > 0 { report.add("fanout", "relays_cpu", relaySeconds / wall * 100, "% of one core, all nodes") }
        if let databaseUsed = databaseCPU?.used, let wall = used.first?.wall {
            recordDatabase("fanout", databaseUsed, relayCPU: relaySeconds, wall: wall, messages: result.messages)
        }
    }

    /// `options.nodes` cluster nodes and `count` devices paired on the first, device i then
    /// connected to node (i mod N) (the first device stays on node 1); `placed[i]` is its node.
    private func spread(
        _ count: Int,
        sameUser: Bool,
        scenario: String
    ) throws
        -> (nodes: [RelayProcess], devices: UncheckedBox<[BenchDevice]>, placed: [Int])
    {
        let nodes = try startCluster(max(1, options.nodes))
        progress("\(scenario): pairing \(count) devices on node 1 of \(nodes.count)")
        let paired = try provision(nodes[0], count: count, sameUser: sameUser)
        let placed = paired.value.indices.map { $0 % nodes.count }
        return (nodes, try reconnect(paired, to: placed.map { target(nodes[$0]) }, keeping: placed.map { $0 == 0 }), placed)
    }

    /// `count` relays as the nodes of one cluster, on one fresh database; node i on `ports[i]`
    /// (0 = any) with its echo backend answering after `echoDelays[i]` ms; `replayCap` as
    /// `startRelay`'s (a whole history read back needs it above the history's length).
    func startCluster(_ count: Int, ports: [Int] = [], echoDelays: [Int] = [], replayCap: Int = 500) throws -> [RelayProcess] {
        let store = try storeSection()
        var nodes: [RelayProcess] = []
        do {
            for index in 0..<count {
                progress("cluster: starting node \(index + 1) of \(count)")
                let cluster = "\n[cluster]\nnode_id = \"bench-\(index + 1)\"\nheartbeat_seconds = 1\nlease_seconds = 5\n"
                let port = index < ports.count ? ports[index] : 0
                let delay = index < echoDelays.count ? echoDelays[index] : 0
                nodes.append(try startRelay(replayCap: replayCap, port: port, extra: cluster, store: store, echoDelayMillis: delay))
            }
        } catch {
            for node in nodes { node.stop() }
            throw error
        }
        return nodes
    }

    /// The paired devices authenticated again at `targets` (device i at `targets[i]`); those
    /// `keeping` their connection stay as they are.
    func reconnect(
        _ devices: UncheckedBox<[BenchDevice]>,
        to targets: [ServiceLoop.ClientTarget],
        keeping: [Bool]
    ) throws
        -> UncheckedBox<[BenchDevice]>
    {
        let loop = self.loop
        let outcome: UncheckedBox<Result<[BenchDevice], BenchError>> = try waitOnLoop(loop, timeout: 600) { done in
            var moved: [BenchDevice] = []
            var waiting = 0
            var failed = false
            for (index, device) in devices.value.enumerated() {
                guard !keeping[index] else {
                    moved.append(device)
                    continue
                }
                device.close()
                let elsewhere = device.elsewhere(targets[index])
                moved.append(elsewhere)
                waiting += 1
                elsewhere.onLive = { _ in
                    waiting -= 1
                    if waiting == 0, !failed { done(UncheckedBox(.success(moved))) }
                }
                elsewhere.onFailure = { device, reason in
                    guard !failed else { return }
                    failed = true
                    done(UncheckedBox(.failure(BenchError("device \(device.deviceID) on another node: \(reason)"))))
                }
                elsewhere.authenticate()
            }
            if waiting == 0 { done(UncheckedBox(.success(moved))) }
        }
        return UncheckedBox(try outcome.value.get())
    }
}

extension BenchRunner {
    /// `bench roundtrip --nodes N`: the devices (each its own user) spread over N cluster nodes,
    /// each sending to its node: the cluster's round trips a second, with every node's CPU and
    /// PostgreSQL's. With one node it is a cluster of one (the ledger's claims included), to
    /// compare with `roundtrip --store postgres` (a relay on its own).
    func clusterRoundtrip() throws {
        let (nodes, devices, _) = try spread(options.devices, sameUser: false, scenario: "roundtrip")
        defer { for node in nodes { node.stop() } }
        defer { release(devices) }
        progress("roundtrip: \(options.devices) devices × \(options.window) in flight on \(nodes.count) nodes for \(options.seconds) s")
        let cpu = CPUMeter()
        let relayCPU = nodes.map { RelayCPUMeter($0) }
        let databaseCPU = postgres.map { DatabaseCPUMeter($0) }
        let result = try drive(devices, window: options.window, seconds: options.seconds, prefix: "rt")
        let used = relayCPU.map(\.used)
        let total = (cpu: used.reduce(0) { $0 + $1.cpu }, wall: used.first?.wall ?? 0)
        report.add("roundtrip", "nodes", Double(nodes.count), "cluster nodes on one PostgreSQL")
        record("roundtrip", result, generatorCPU: cpu.share, relayCPU: total)
        if let databaseUsed = databaseCPU?.used {
            recordDatabase("roundtrip", databaseUsed, relayCPU: total.cpu, wall: total.wall, messages: result.completed)
        }
    }
}
