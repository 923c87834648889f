import Foundation
import RelayCore
import RelayTransport

extension BenchRunner {
    /// Chat through the gateway operator API, then Clawline chat relayed to a second relay's gateway.
    func gateway() throws {
        try gatewayOperators()
        try relayToRelay()
    }

    private func gatewayOperators() throws {
        let secret = Identifiers.newUUID()
        let relay = try startRelay(extra: "[gateway]\nlisten = \"127.0.0.1:0\"\nshared_token = \"\(secret)\"\n")
        defer { relay.stop() }
        let count = max(1, options.devices / 4)
        progress("gateway: \(count) operators × \(options.window) chat runs in flight for \(options.seconds) s")
        let (loop, target) = (self.loop, ServiceLoop.ClientTarget(host: "127.0.0.1", port: relay.gatewayPort, path: "/"))
        let operators: UncheckedBox<Result<[GatewayOperator], BenchError>> = try waitOnLoop(loop, timeout: 60) { done in
            let all = (0..<count).map { _ in GatewayOperator(loop: loop, target: target, sharedToken: secret) }
            var ready = 0
            for op in all {
                op.onReady = { _ in
                    ready += 1
                    if ready == all.count { done(UncheckedBox(.success(all))) }
                }
                op.onFailure = { reason in done(UncheckedBox(.failure(BenchError("gateway operator: \(reason)")))) }
                op.connect()
            }
        }
        let connected = UncheckedBox(try operators.value.get())
        defer {
            try? onLoop {
                for op in connected.value {
                    op.onFailure = nil
                    op.close()
                }
            }
        }
        let (window, seconds) = (options.window, options.seconds)
        let cpu = CPUMeter()
        let relayCPU = RelayCPUMeter(relay)
        let result: RoundtripDriver.Result = try waitOnLoop(loop, timeout: seconds + 120) { done in
            let driver = GatewayRoundtripDriver(operators: connected.value, window: window, durationSeconds: seconds)
            driver.run { result in
                _ = driver
                done(result)
            }
        }
        record("gateway-operator", result, generatorCPU: cpu.share, relayCPU: relayCPU.used, item: "turns", framesPerItem: nil)
    }

    private func relayToRelay() throws {
        let port = freeLoopbackPort()
        let upstream = try startRelay(extra: "[gateway]\nlisten = \"127.0.0.1:\(port)\"\nauto_approve_loopback = true\n")
        defer { upstream.stop() }
        let relay = try startRelay(
            extra: "[[backends]]\nname = \"up\"\nkind = \"openclaw\"\nurl = \"ws://127.0.0.1:\(port)\"\n",
            backend: "up"
        )
        defer { relay.stop() }
        let deadline = Date().addingTimeInterval(30)
        while !relay.metrics().contains("clawrelay_upstream_link{account=\"up\",state=\"connected\"} 1") {
            guard Date() < deadline else { throw BenchError("relay-to-relay: the upstream account never connected") }
            usleep(50_000)
        }
        let devices = try provision(relay, count: options.devices, sameUser: false)
        defer { release(devices) }
        progress("gateway: relay-to-relay roundtrip, \(options.devices) Clawline devices on A, echo on B")
        let cpu = CPUMeter()
        let relayCPU = RelayCPUMeter(relay)
        let result = try drive(devices, window: options.window, seconds: options.seconds, prefix: "r2r")
        record("gateway-relay-to-relay", result, generatorCPU: cpu.share, relayCPU: relayCPU.used, item: "turns", framesPerItem: nil)
    }

}
