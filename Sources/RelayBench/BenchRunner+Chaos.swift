import Foundation
import RelayCore
import RelayTransport
import Synchronization

extension BenchRunner {
    /// Under `roundtrip` load, `kill -9` the relay N times and restart it on the same data directory;
    /// then every message the relay acknowledged must be in the replayed history.
    func chaos() throws {
        let port = freeLoopbackPort()
        let relay = try startRelay(replayCap: 1_000_000, port: port)
        defer { relay.stop() }
        let devices = try provision(relay, count: options.devices, sameUser: false)
        defer { release(devices) }
        var acked: [String] = []
        let slice = max(0.3, options.seconds / Double(max(1, options.kills)))
        for round in 1...max(1, options.kills) {
            let finished = DispatchSemaphore(value: 0)
            let outcome = Mutex<RoundtripDriver.Result?>(nil)
            let (window, prefix) = (options.window, "k\(round)")
            loop.execute {
                let driver = RoundtripDriver(devices: devices.value, window: window, durationSeconds: 3600, prefix: prefix)
                driver.run { result in
                    _ = driver
                    outcome.withLock { $0 = result }
                    finished.signal()
                }
            }
            usleep(UInt32(slice * 1_000_000))
            relay.kill()
            guard finished.wait(timeout: .now() + 30) == .success, let result = outcome.withLock({ $0 }) else {
                throw BenchError("chaos round \(round): the load did not stop after the kill")
            }
            acked += result.ackedContents
            try relay.start()
            try reauthenticate(devices)
            progress("chaos: kill \(round)/\(options.kills): \(result.acked) acknowledged before the kill, \(acked.count) in all")
        }
        let found = try collectHistory(devices)
        let lost = acked.filter { !found.contains($0) }
        report.add("chaos", "kills", Double(options.kills), "kill -9")
        report.add("chaos", "acknowledged", Double(acked.count), "messages")
        report.add("chaos", "lost", Double(lost.count), "messages")
        if !lost.isEmpty { report.notes.append("chaos: lost acknowledged messages: \(lost.prefix(20).joined(separator: ", "))") }
    }

    /// Authenticates every device again (after a restart).
    func reauthenticate(_ devices: UncheckedBox<[BenchDevice]>) throws {
        let failures: Int = try waitOnLoop(loop, timeout: 120) { done in
            var pending = devices.value.count
            var failed = 0
            for device in devices.value {
                device.onLive = { _ in
                    pending -= 1
                    if pending == 0 { done(failed) }
                }
                device.onFailure = { _, _ in
                    failed += 1
                    pending -= 1
                    if pending == 0 { done(failed) }
                }
                device.authenticate()
            }
        }
        if failures > 0 { throw BenchError("\(failures) devices could not authenticate after the restart") }
    }

    /// Every user-message content in the devices' full histories.
    private func collectHistory(_ devices: UncheckedBox<[BenchDevice]>) throws -> Set<String> {
        let contents: [String] = try waitOnLoop(loop, timeout: 300) { done in
            var pending = devices.value.count
            var seen: [String] = []
            for device in devices.value {
                device.close()
                var expected = -1
                var received = 0
                let finishOne = {
                    pending -= 1
                    if pending == 0 { done(seen) }
                }
                device.onText = { _, text in
                    guard FrameSniffer.string("type", in: text) == "message" else { return }
                    received += 1
                    if FrameSniffer.isUserEcho(text), let content = FrameSniffer.string("content", in: text) { seen.append(content) }
                    if received == expected { finishOne() }
                }
                device.onLive = { device in
                    expected = Int(device.authResult?["replayCount"]?.intValue ?? 0)
                    if expected == 0 { finishOne() }
                }
                device.onFailure = { _, _ in finishOne() }
                device.authenticate(lastMessageID: nil)
            }
        }
        return Set(contents)
    }
}

extension BenchRunner {
    /// Mutated frames and half-open sockets for a fixed count; the relay must stay up, answer with
    /// protocol errors, and keep its memory bounded.
    func fuzz() throws {
        let relay = try startRelay()
        defer { relay.stop() }
        let devices = try provision(relay, count: 8, sameUser: false)
        defer { release(devices) }
        let total = options.fuzzFrames
        let before = relay.residentBytes()
        let halfOpen = openHalfOpenSockets(port: relay.clawlinePort, count: 64)
        defer { for fd in halfOpen { close(fd) } }
        progress("fuzz: \(total) mutated frames from 8 devices, \(halfOpen.count) half-open sockets")
        let loop = self.loop
        let result: FuzzDriver.Result = try waitOnLoop(loop, timeout: 600) { done in
            let driver = FuzzDriver(devices: devices.value, total: total, loop: loop)
            driver.run { result in
                _ = driver
                done(result)
            }
        }
        let after = relay.residentBytes()
        // The relay must still serve a normal turn afterwards.
        let check = try drive(UncheckedBox([devices.value[0]]), window: 1, seconds: 0, prefix: "after")
        report.add("fuzz", "frames_sent", Double(result.sent), "frames")
        report.add("fuzz", "error_replies", Double(result.errors), "frames")
        report.add("fuzz", "closes_by_relay", Double(result.closes), "sockets")
        report.add("fuzz", "relay_rss_before", Double(before) / 1024, "KiB")
        report.add("fuzz", "relay_rss_after", Double(after) / 1024, "KiB")
        report.add("fuzz", "turns_after_fuzz", Double(check.completed), "completed")
        if check.completed == 0 { throw BenchError("fuzz: the relay did not answer a normal message afterwards") }
    }

    /// TCP connections that send half a request line and then nothing.
    private func openHalfOpenSockets(port: Int, count: Int) -> [Int32] {
        (0..<count).compactMap { _ in
            guard let fd = connectLoopback(port: port) else { return nil }
            _ = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n".withCString { send(fd, $0, strlen($0), 0) }
            return fd
        }
    }
}
