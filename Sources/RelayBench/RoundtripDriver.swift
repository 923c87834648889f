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
    private var outstanding: [ObjectIdentifier: [(id: String, content: String, sent: UInt64)]] = [:]
    private var pendingAcks: [String: (UInt64, String)] = [:]
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
        let now = nowMicros()
        outstanding[ObjectIdentifier(device), default: []].append((id, content, now))
        pendingAcks[id] = (now, content)
        device.send(messageFrame(id: id, content: content))
    }

    private func received(_ text: String, on device: BenchDevice) {
        let now = nowMicros()
        if FrameSniffer.isAck(text) {
            guard let id = FrameSniffer.string("id", in: text), let (sent, content) = pendingAcks.removeValue(forKey: id) else { return }
            result.ack.record(now - sent)
            result.acked += 1
            result.ackedContents.append(content)
        } else if FrameSniffer.isAssistantFinal(text) {
            let key = ObjectIdentifier(device)
            guard var queue = outstanding[key], !queue.isEmpty else { return }
            let first = queue.removeFirst()
            outstanding[key] = queue
            result.final.record(now - first.sent)
            result.completed += 1
            lastFinalAt = now
            if now - startedAt < durationMicros {
                send(on: device)
            } else if outstanding.values.allSatisfy(\.isEmpty) {
                finish()
            }
        }
    }

    private func deviceFailed(_ device: BenchDevice) {
        result.failures += 1
        outstanding[ObjectIdentifier(device)] = []
        if outstanding.values.allSatisfy(\.isEmpty) { finish() }
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
