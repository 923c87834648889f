import RelayCore
import RelayTransport

/// Sends a fixed number of mutated Clawline frames from authenticated devices; devices the relay
/// closes on (as the protocol says it must) authenticate again and go on.
final class FuzzDriver {
    struct Result: Sendable {
        var sent = 0
        var errors = 0
        var closes = 0
    }

    private let devices: [BenchDevice]
    private let total: Int
    private let loop: ServiceLoop
    private var result = Result()
    private var completion: ((Result) -> Void)?
    private var random: UInt64 = 0x9E37_79B9_7F4A_7C15

    init(devices: [BenchDevice], total: Int, loop: ServiceLoop) {
        self.devices = devices
        self.total = total
        self.loop = loop
    }

    func run(completion: @escaping (Result) -> Void) {
        self.completion = completion
        for device in devices {
            device.onText = { [weak self] _, text in
                if FrameSniffer.contains(text, "\"type\":\"error\"") { self?.result.errors += 1 }
            }
            device.onFailure = { [weak self] device, _ in
                self?.result.closes += 1
                device.authenticate()
            }
        }
        tick()
    }

    private func tick() {
        for device in devices where device.phase == .live && result.sent < total {
            guard let connection = device.connection, connection.bufferedBytes < 1 << 20 else { continue }
            send(mutation(result.sent), on: connection)
            result.sent += 1
        }
        if result.sent < total {
            loop.schedule(afterMillis: 1) { [weak self] in self?.tick() }
        } else {
            // Let the last answers and closes arrive before reporting.
            loop.schedule(afterMillis: 500) { [weak self] in
                guard let self, let completion else { return }
                self.completion = nil
                for device in devices { device.onFailure = nil }
                completion(result)
            }
        }
    }

    private static let deep = String(repeating: "[", count: 512)
    private static let overFrameLimit = String(repeating: "B", count: 1_200_000)
    private static let overContentLimit = String(repeating: "B", count: 66_000)

    private enum Payload {
        case text(String)
        case bytes([UInt8])
    }

    private func send(_ payload: Payload, on connection: WebSocketConnection) {
        switch payload {
        case .text(let text): connection.send(text: text)
        case .bytes(let bytes): connection.send(utf8: bytes)
        }
    }

    private func next() -> UInt64 {
        random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return random >> 33
    }

    private func mutation(_ index: Int) -> Payload {
        let valid = #"{"type":"message","id":"c_fz\#(index)","content":"fuzz \#(index)"}"#
        switch index % 12 {
        case 0: return .text(String(valid.prefix(Int(next() % UInt64(valid.count)))))  // truncated JSON
        case 1: return .text(#"{"type":"message","id":\#(index),"content":["x"]}"#)  // wrong types
        case 2: return .text(#"{"type":"message","id":"c_big\#(index)","content":""# + Self.overContentLimit + #""}"#)
        case 3: return .text(#"{"type":""# + Self.overContentLimit.prefix(10_000) + #""}"#)  // huge unknown type
        case 4: return .bytes(Array(#"{"type":"message","id":"c_u","content":""#.utf8) + [0xC3, 0x28, 0xFF] + Array(#""}"#.utf8))  // bad UTF-8
        case 5: return .text(Self.deep)  // deep nesting, not closed
        case 6: return .text(#"{"type":"pair_decision","deviceId":"x","approve":"yes"}"#)
        case 7: return .text(#"{"type":"typing","active":true,"role":"assistant"}"#)
        case 8: return .text(#"{"type":"auth","protocolVersion":1,"token":"a.b.c","deviceId":"nope"}"#)
        case 9:
            return .text(
                #"{"type":"message","id":"c_att\#(index)","content":"x","attachments":[{"type":"image","mimeType":"image/png","data":"!!"}]}"#
            )
        case 10:
            var bytes = Array(valid.utf8)
            for _ in 0..<3 { bytes[Int(next() % UInt64(bytes.count))] = UInt8(32 + next() % 90) }
            return .bytes(bytes)  // flipped bytes
        default:
            // Over the frame limit one time in ten (the generator masks every byte it sends), else past 64 KB of content.
            let body = index % 120 == 11 ? Self.overFrameLimit : Self.overContentLimit
            return .text(#"{"type":"message","id":"c_big\#(index)","content":""# + body + #""}"#)
        }
    }
}
