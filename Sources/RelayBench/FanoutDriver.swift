/// The first device sends; every device of the user (sender included) must receive each user echo.
final class FanoutDriver {
    struct Result: Sendable {
        var messages = 0
        var seconds = 0.0
        var delay = LatencyRecorder()
        /// In a cluster: the deliveries on the sender's node, and on the other nodes.
        var sameNode = LatencyRecorder()
        var otherNodes = LatencyRecorder()
    }

    private let devices: [BenchDevice]
    /// Per device, whether it is connected to the sender's node.
    private let onSendersNode: [Bool]
    private let durationMicros: UInt64
    private let window = 4
    private var counter = 0
    private var sentAt: [Int: UInt64] = [:]
    private var remaining: [Int: Int] = [:]
    private var startedAt: UInt64 = 0
    private var result = Result()
    private var completion: ((Result) -> Void)?

    init(devices: [BenchDevice], durationSeconds: Double, onSendersNode: [Bool]? = nil) {
        self.devices = devices
        self.onSendersNode = onSendersNode ?? devices.map { _ in true }
        self.durationMicros = UInt64(durationSeconds * 1_000_000)
    }

    func run(completion: @escaping (Result) -> Void) {
        self.completion = completion
        guard let sender = devices.first else { return completion(result) }
        startedAt = nowMicros()
        for (device, local) in zip(devices, onSendersNode) {
            device.onText = { [weak self] _, text in self?.received(text, local: local) }
        }
        for _ in 0..<window { send(on: sender) }
    }

    private func send(on sender: BenchDevice) {
        counter += 1
        sentAt[counter] = nowMicros()
        remaining[counter] = devices.count
        sender.send(messageFrame(id: "c_fan\(counter)", content: "fan-\(counter)"))
    }

    private func received(_ text: String, local: Bool) {
        guard FrameSniffer.isUserEcho(text), let number = FrameSniffer.number(after: "fan-", in: text), let sent = sentAt[number] else { return }
        let now = nowMicros()
        result.delay.record(now - sent)
        if local { result.sameNode.record(now - sent) } else { result.otherNodes.record(now - sent) }
        remaining[number, default: 1] -= 1
        guard remaining[number] == 0 else { return }
        remaining.removeValue(forKey: number)
        sentAt.removeValue(forKey: number)
        result.messages += 1
        if now - startedAt < durationMicros {
            send(on: devices[0])
        } else if remaining.isEmpty, let completion {
            self.completion = nil
            result.seconds = Double(now - startedAt) / 1e6
            for device in devices { device.onText = nil }
            completion(result)
        }
    }
}

/// Runs a fixed number of turns on one device.
final class CountedDriver {
    private let device: BenchDevice
    private let turns: Int
    private let window: Int
    private var sent = 0
    private var finished = 0
    private var completion: ((Int) -> Void)?

    init(device: BenchDevice, turns: Int, window: Int) {
        self.device = device
        self.turns = turns
        self.window = window
    }

    func run(completion: @escaping (Int) -> Void) {
        self.completion = completion
        device.onText = { [weak self] _, text in
            guard let self, FrameSniffer.isAssistantFinal(text) else { return }
            finished += 1
            if finished == turns {
                device.onText = nil
                self.completion?(finished)
                self.completion = nil
            } else if sent < turns {
                send()
            }
        }
        for _ in 0..<min(window, turns) { send() }
        if turns == 0 { completion(0) }
    }

    private func send() {
        sent += 1
        device.send(messageFrame(id: "c_fill\(sent)", content: "fill-\(sent)"))
    }
}
