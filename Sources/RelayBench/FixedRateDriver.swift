import Foundation
import RelayCore
import RelayTransport

/// Open-loop load: `rate` messages a second in total for `duration`, message i due at
/// start + i/rate and sent round-robin over the devices, however many are still in flight.
///
/// Latency runs from a message's due time, not from when the generator got to send it, so a
/// relay (or generator) that falls behind shows up in the percentiles instead of quietly slowing
/// the senders down (no coordinated omission). Once everything is sent the driver waits at most
/// `drainSeconds` for the last answers; what is still missing then is counted as unanswered.
///
/// The clock is a pacer thread sleeping until each due time (`clock_nanosleep`), which then has
/// the loop send what is due: lws timers are no metronome here, since lws polls with a timeout
/// in whole milliseconds and spins through the last one before every deadline.
final class FixedRateDriver {
    private let devices: [BenchDevice]
    private let loop: ServiceLoop
    private let rate: Double
    private let total: Int
    private let drainMicros: UInt64
    private let prefix: String
    private var next = 0
    private var startedAt: UInt64 = 0
    private var lastSentAt: UInt64 = 0
    private var lastFinalAt: UInt64 = 0
    private var inFlight = InFlightMessages()
    private var result = RoundtripDriver.Result()
    private var completion: ((RoundtripDriver.Result) -> Void)?
    private var drainTimer: TimerID?

    init(devices: [BenchDevice], loop: ServiceLoop, rate: Double, durationSeconds: Double, drainSeconds: Double, prefix: String) {
        self.devices = devices
        self.loop = loop
        self.rate = rate
        self.total = devices.isEmpty ? 0 : max(1, Int(rate * durationSeconds))
        self.drainMicros = UInt64(drainSeconds * 1_000_000)
        self.prefix = prefix
    }

    func run(completion: @escaping (RoundtripDriver.Result) -> Void) {
        self.completion = completion
        for device in devices {
            device.onText = { [weak self] device, text in self?.received(text, on: device) }
            device.onFailure = { [weak self] device, _ in self?.deviceFailed(device) }
        }
        startedAt = nowMicros()
        guard total > 0 else { return allSent() }
        let (driver, loop, total, startedAt, rate) = (LoopBound(self, loop: loop), loop, total, startedAt, rate)
        let pacer = Thread {
            Thread.nameCurrent("bench-pacer")
            var index = 0
            while index < total {
                Self.sleep(until: Self.due(index, start: startedAt, rate: rate))
                // Everything due by now goes in one job (the pacer may have woken late).
                let elapsed = Double(nowMicros() - startedAt) / 1_000_000
                let last = min(total - 1, max(index, Int(elapsed * rate)))
                loop.execute { driver.value.sendDue(through: last) }
                index = last + 1
            }
        }
        pacer.start()
    }

    /// When message `index` is due.
    private static func due(_ index: Int, start: UInt64, rate: Double) -> UInt64 { start + UInt64(Double(index) * 1_000_000 / rate) }

    private static func sleep(until micros: UInt64) {
        var deadline = timespec(tv_sec: Int(micros / 1_000_000), tv_nsec: Int(micros % 1_000_000) * 1_000)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
    }

    /// Sends the messages up to `last` that are not sent yet.
    private func sendDue(through last: Int) {
        guard completion != nil else { return }
        let now = nowMicros()
        while next <= last {
            send(next, on: devices[next % devices.count], due: Self.due(next, start: startedAt, rate: rate), now: now)
            next += 1
        }
        if next == total { allSent() }
    }

    private func send(_ index: Int, on device: BenchDevice, due: UInt64, now: UInt64) {
        let id = "c_\(prefix)\(index)"
        let content = "\(prefix)-\(index)"
        inFlight.sent(id: id, content: content, start: due, on: device)
        result.lateness.record(now > due ? now - due : 0)
        result.sent += 1
        lastSentAt = now
        device.send(messageFrame(id: id, content: content))
    }

    private func allSent() {
        result.sendSeconds = lastSentAt > startedAt ? Double(lastSentAt - startedAt) / 1e6 : 0
        if inFlight.count == 0 { return finish() }
        drainTimer = loop.schedule(afterMillis: Int(drainMicros / 1_000)) { [weak self] in self?.finish() }
    }

    private func received(_ text: String, on device: BenchDevice) {
        let now = nowMicros()
        guard inFlight.received(text, on: device, at: now, into: &result) else { return }
        lastFinalAt = now
        if next == total, inFlight.count == 0 { finish() }
    }

    private func deviceFailed(_ device: BenchDevice) {
        result.failures += 1
        inFlight.drop(device)
        if next == total, inFlight.count == 0 { finish() }
    }

    private func finish() {
        guard let completion else { return }
        self.completion = nil
        if let drainTimer { loop.cancel(drainTimer) }
        let end = lastFinalAt > startedAt ? lastFinalAt : nowMicros()
        result.seconds = Double(end - startedAt) / 1e6
        result.unanswered = inFlight.count
        for device in devices {
            device.onText = nil
            device.onFailure = nil
        }
        completion(result)
    }
}
