import RelayCore
import RelayTransport

/// Every device keeps `window` messages in flight for `duration`, then drains.
/// Records send→ack and send→final latency.
final class RoundtripDriver {
    struct Result: Sendable {
        var completed = 0
        var acked = 0
        var seconds = 0.0
        var ack = LatencyRecorder()
        var final = LatencyRecorder()
        /// Content of every message the relay acknowledged (for the chaos check).
        var ackedContents: [String] = []
        var failures = 0
        /// Open loop only (`FixedRateDriver`): messages sent, the seconds from the first send to
        /// the last, how late each went out after its due time, and those never answered.
        var sent = 0
        var sendSeconds = 0.0
        var lateness = LatencyRecorder()
        var unanswered = 0
    }

    private let devices: [BenchDevice]
    private let window: Int
    private let durationMicros: UInt64
    private let prefix: String
    private var counter = 0
    private var startedAt: UInt64 = 0
    private var inFlight = InFlightMessages()
    private var result = Result()
    private var completion: ((Result) -> Void)?
    private var lastFinalAt: UInt64 = 0

    init(devices: [BenchDevice], window: Int, durationSeconds: Double, prefix: String) {
        self.devices = devices
        self.window = window
        self.durationMicros = UInt64(durationSeconds * 1_000_000)
        self.prefix = prefix
    }

    func run(completion: @escaping (Result) -> Void) {
        self.completion = completion
        startedAt = nowMicros()
        for device in devices {
            device.onText = { [weak self] device, text in self?.received(text, on: device) }
            device.onFailure = { [weak self] device, _ in self?.deviceFailed(device) }
            for _ in 0..<window { send(on: device) }
        }
        if devices.isEmpty { finish() }
    }

    private func send(on device: BenchDevice) {
        counter += 1
        let id = "c_\(prefix)\(counter)"
        let content = "\(prefix)-\(counter)"
        inFlight.sent(id: id, content: content, start: nowMicros(), on: device)
        device.send(messageFrame(id: id, content: content))
    }

    private func received(_ text: String, on device: BenchDevice) {
        let now = nowMicros()
        guard inFlight.received(text, on: device, at: now, into: &result) else { return }
        lastFinalAt = now
        if now - startedAt < durationMicros {
            send(on: device)
        } else if inFlight.count == 0 {
            finish()
        }
    }

    private func deviceFailed(_ device: BenchDevice) {
        result.failures += 1
        inFlight.drop(device)
        if inFlight.count == 0 { finish() }
    }

    /// Ends the run now (chaos kill, or a timeout), keeping what was measured.
    func finish() {
        guard let completion else { return }
        self.completion = nil
        let end = lastFinalAt > startedAt ? lastFinalAt : nowMicros()
        result.seconds = Double(end - startedAt) / 1e6
        for device in devices {
            device.onText = nil
            device.onFailure = nil
        }
        completion(result)
    }
}
