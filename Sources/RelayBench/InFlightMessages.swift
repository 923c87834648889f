/// The Clawline messages a driver has in flight: acks are matched by client id, finals by device
/// in send order (a device's conversation answers in order). Latencies run from each message's
/// start: when it was sent (closed loop) or when it was due (open loop).
struct InFlightMessages {
    private var acks: [String: (start: UInt64, content: String)] = [:]
    private var finals: [ObjectIdentifier: [UInt64]] = [:]
    /// Messages whose final has not arrived.
    private(set) var count = 0

    mutating func sent(id: String, content: String, start: UInt64, on device: BenchDevice) {
        acks[id] = (start, content)
        finals[ObjectIdentifier(device), default: []].append(start)
        count += 1
    }

    /// Counts an ack or a final in `text` into `result`; true when it was a final of this device.
    mutating func received(_ text: String, on device: BenchDevice, at now: UInt64, into result: inout RoundtripDriver.Result) -> Bool {
        if FrameSniffer.isAck(text) {
            guard let id = FrameSniffer.string("id", in: text), let (start, content) = acks.removeValue(forKey: id) else { return false }
            result.ack.record(now - start)
            result.acked += 1
            result.ackedContents.append(content)
            return false
        }
        guard FrameSniffer.isAssistantFinal(text), var queue = finals[ObjectIdentifier(device)], !queue.isEmpty else { return false }
        let start = queue.removeFirst()
        finals[ObjectIdentifier(device)] = queue
        count -= 1
        result.final.record(now - start)
        result.completed += 1
        return true
    }

    /// The device failed: its finals are no longer expected.
    mutating func drop(_ device: BenchDevice) {
        count -= finals.removeValue(forKey: ObjectIdentifier(device))?.count ?? 0
    }
}
