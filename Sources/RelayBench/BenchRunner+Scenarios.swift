import Foundation
import RelayCore
import RelayTransport

extension BenchRunner {
    /// One user with F devices; one sender keeps a few messages in flight; every device must see each echo.
    func fanout() throws {
        let relay = try startRelay()
        defer { relay.stop() }
        progress("fanout: pairing \(options.fanout) devices of one user")
        let devices = try provision(relay, count: options.fanout, sameUser: true)
        defer { release(devices) }
        progress("fanout: one sender, \(options.fanout) receivers, \(options.seconds) s")
        let seconds = options.seconds
        let cpu = CPUMeter()
        let result: FanoutDriver.Result = try waitOnLoop(loop, timeout: seconds + 120) { done in
            let driver = FanoutDriver(devices: devices.value, durationSeconds: seconds)
            driver.run { result in
                _ = driver
                done(result)
            }
        }
        report.add("fanout", "receivers", Double(options.fanout), "devices")
        report.add("fanout", "messages", Double(result.messages), "count")
        report.add("fanout", "deliveries", result.seconds > 0 ? Double(result.delay.count) / result.seconds : 0, "deliveries/s")
        for (key, value) in result.delay.summary("delivery").sorted(by: { $0.key < $1.key }) { report.add("fanout", key, value, "ms") }
        report.add("fanout", "generator_cpu", cpu.share * 100, "% of one core")
    }

    static let idleReconnectAttempts = 5

    /// C authenticated, idle connections: relay RSS per connection, and the time to connect 1,000.
    func idle() throws {
        let relay = try startRelay()
        defer { relay.stop() }
        let baseline = relay.residentBytes()
        let count = options.idleConnections
        progress("idle: pairing and authenticating \(count) devices (relay RSS \(baseline / 1024) KiB at start)")
        let devices = try provision(relay, count: count, sameUser: false, concurrency: 128)
        defer { release(devices) }
        let loaded = relay.residentBytes()
        progress("idle: reconnecting all \(count) devices to time connect + auth")
        let elapsed = try reconnectAll(devices)
        let reconnected = relay.residentBytes()
        report.add("idle", "connections", Double(count), "authenticated sockets")
        report.add("idle", "relay_rss_start", Double(baseline) / 1024, "KiB")
        report.add("idle", "relay_rss_loaded", Double(loaded) / 1024, "KiB")
        report.add("idle", "rss_per_connection", count > 0 ? Double(loaded - baseline) / Double(count) / 1024 : 0, "KiB")
        report.add("idle", "rss_after_reconnect", Double(reconnected) / 1024, "KiB")
        report.add("idle", "connect_and_auth_per_1000", count > 0 ? elapsed / Double(count) * 1000 * 1000 : 0, "ms")
        // More rounds tell what a connection's lifetime leaves behind: a leak grows every round,
        // the allocator's slack does not.
        guard options.idleRounds > 1, count > 0 else { return }
        for round in 2...options.idleRounds {
            progress("idle: reconnect round \(round) of \(options.idleRounds)")
            _ = try reconnectAll(devices)
        }
        let last = relay.residentBytes()
        report.add(
            "idle",
            "rss_growth_per_round_per_connection",
            (Double(last) - Double(reconnected)) / Double(options.idleRounds - 1) / Double(count),
            "bytes"
        )
    }

    /// Closes every device, then reconnects and authenticates them 256 at a time; returns the seconds it took.
    private func reconnectAll(_ devices: UncheckedBox<[BenchDevice]>) throws -> Double {
        // A reconnect that fails (on a busy machine, loopback ports can run short: every closed
        // socket waits in TIME_WAIT) is retried after a pause, a few times, then the scenario fails.
        let loop = self.loop
        let outcome: Result<Double, BenchError> = try waitOnLoop(loop, timeout: 600) { done in
            let all = devices.value
            for device in all { device.close() }
            let started = nowMicros()
            var next = 0
            var live = 0
            var retries = 0
            var finished = false
            func finish(_ result: Result<Double, BenchError>) {
                guard !finished else { return }
                finished = true
                done(result)
            }
            func startOne() {
                guard next < all.count else { return }
                let device = all[next]
                next += 1
                var attempts = 0
                device.onLive = { _ in
                    live += 1
                    if live == all.count { finish(.success(Double(nowMicros() - started) / 1e6)) } else { startOne() }
                }
                device.onFailure = { device, reason in
                    attempts += 1
                    retries += 1
                    guard attempts < Self.idleReconnectAttempts else {
                        return finish(.failure(BenchError("idle: a device could not reconnect in \(attempts) attempts: \(reason)")))
                    }
                    if retries == 1 || retries % 100 == 0 { progress("idle: \(retries) reconnects retried (last: \(reason))") }
                    _ = loop.schedule(afterMillis: 200 * attempts) { if !finished { device.authenticate() } }
                }
                device.authenticate()
            }
            if all.isEmpty { finish(.success(0)) }
            for _ in 0..<min(256, all.count) { startOne() }
        }
        return try outcome.get()
    }

    /// A device reconnecting K events behind: time from `auth` to the last replayed event.
    func replay() throws {
        let events = options.replayEvents
        let relay = try startRelay(replayCap: events)
        defer { relay.stop() }
        let devices = try provision(relay, count: 2, sameUser: true)
        defer { release(devices) }
        progress("replay: writing \(events) events (\(events / 2) turns)")
        let writer = UncheckedBox([devices.value[0]])
        try onLoop { devices.value[1].tracksCursor = true }
        _ = try drive(writer, window: 16, seconds: 0, prefix: "warm")
        let cursor: String? = try waitOnLoop(loop, timeout: 10) { done in
            let reader = devices.value[1]
            reader.close()
            done(reader.lastEventID)
        }
        let filled = try driveCount(writer, turns: max(1, events / 2))
        progress("replay: \(filled) turns written; reconnecting the second device with its cursor")
        let measured: (Double, Int) = try waitOnLoop(loop, timeout: 300) { done in
            let reader = devices.value[1]
            var started: UInt64 = 0
            var expected = -1
            var received = 0
            reader.onText = nil
            reader.onLive = { device in
                expected = Int(device.authResult?["replayCount"]?.intValue ?? 0)
                if expected == 0 { done((Double(nowMicros() - started) / 1e6, 0)) }
                device.onText = { _, text in
                    guard FrameSniffer.string("type", in: text) == "message" else { return }
                    received += 1
                    if received == expected { done((Double(nowMicros() - started) / 1e6, received)) }
                }
            }
            started = nowMicros()
            reader.authenticate(lastMessageID: cursor)
        }
        report.add("replay", "events_replayed", Double(measured.1), "events")
        report.add("replay", "time_to_last_event", measured.0 * 1000, "ms")
    }

    /// `roundtrip` with the audit log on, then off: the ratio shows what auditing costs.
    func auditRatio() throws {
        var rates: [Bool: Double] = [:]
        for audit in [true, false] {
            let relay = try startRelay(audit: audit)
            defer { relay.stop() }
            let devices = try provision(relay, count: options.devices, sameUser: false)
            defer { release(devices) }
            progress("audit: roundtrip with audit \(audit ? "on" : "off")")
            let result = try drive(devices, window: options.window, seconds: options.seconds, prefix: audit ? "aon" : "aoff")
            rates[audit] = result.seconds > 0 ? Double(result.completed) / result.seconds : 0
            report.add("audit", audit ? "throughput_audit_on" : "throughput_audit_off", rates[audit] ?? 0, "messages/s")
        }
        if let on = rates[true], let off = rates[false], off > 0 { report.add("audit", "on_over_off", on / off * 100, "%") }
    }

    /// Closes the devices quietly before their relay stops.
    func release(_ devices: UncheckedBox<[BenchDevice]>) {
        try? onLoop {
            for device in devices.value {
                device.onFailure = nil
                device.onText = nil
                device.close()
            }
        }
    }

    /// Runs `body` on the generator loop and waits for it.
    func onLoop(_ body: @escaping @Sendable () -> Void) throws {
        let _: Bool = try waitOnLoop(loop, timeout: 30) { done in
            body()
            done(true)
        }
    }

    /// Runs exactly `turns` turns on one device (window 16) and returns how many completed.
    func driveCount(_ devices: UncheckedBox<[BenchDevice]>, turns: Int) throws -> Int {
        try waitOnLoop(loop, timeout: 600) { done in
            let driver = CountedDriver(device: devices.value[0], turns: turns, window: 16)
            driver.run { count in
                _ = driver
                done(count)
            }
        }
    }
}
