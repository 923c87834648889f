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
            let load = startLoad(devices, seconds: 3600, prefix: "k\(round)")
            usleep(UInt32(slice * 1_000_000))
            relay.kill()
            guard let result = load(30) else { throw BenchError("chaos round \(round): the load did not stop after the kill") }
            acked += result.ackedContents
            try relay.start()
            try reauthenticate(devices)
            progress("chaos: kill \(round)/\(options.kills): \(result.acked) acknowledged before the kill, \(acked.count) in all")
        }
        let found = Set(try collectHistory(devices).users)
        let lost = acked.filter { !found.contains($0) }
        report.add("chaos", "kills", Double(options.kills), "kill -9")
        report.add("chaos", "acknowledged", Double(acked.count), "messages")
        report.add("chaos", "lost", Double(lost.count), "messages")
        if !lost.isEmpty { report.notes.append("chaos: lost acknowledged messages: \(lost.prefix(20).joined(separator: ", "))") }
    }

    /// Starts roundtrip load over `devices` for `seconds` on the generator's loop; the function it
    /// returns waits up to the seconds it is given for the load to end and returns its result (nil
    /// when it did not end by then).
    func startLoad(_ devices: UncheckedBox<[BenchDevice]>, seconds: Double, prefix: String) -> (Double) -> RoundtripDriver.Result? {
        let finished = DispatchSemaphore(value: 0)
        let outcome = Mutex<RoundtripDriver.Result?>(nil)
        let window = options.window
        loop.execute {
            let driver = RoundtripDriver(devices: devices.value, window: window, durationSeconds: seconds, prefix: prefix)
            driver.run { result in
                _ = driver
                outcome.withLock { $0 = result }
                finished.signal()
            }
        }
        return { timeout in
            guard finished.wait(timeout: .now() + timeout) == .success else { return nil }
            return outcome.withLock { $0 }
        }
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

    /// Every message content in the devices' full histories: the users' and the answers'
    /// (assistant finals), as often as each was replayed.
    func collectHistory(_ devices: UncheckedBox<[BenchDevice]>) throws -> (users: [String], answers: [String]) {
        try waitOnLoop(loop, timeout: 300) { done in
            var pending = devices.value.count
            var seen: (users: [String], answers: [String]) = ([], [])
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
                    if let content = FrameSniffer.string("content", in: text) {
                        if FrameSniffer.isUserEcho(text) { seen.users.append(content) }
                        if FrameSniffer.isAssistantFinal(text) { seen.answers.append(content) }
                    }
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
    }
}
