import Crypto
import Foundation
import GatewayWire
import RelayCore
import RelayTransport

/// A bench operator on a gateway listener: Ed25519 identity, signed connect with the relay's
/// shared token, then `chat.send` runs keyed by idempotency key.
final class GatewayOperator: ClientHandler {
    private let key = Curve25519.Signing.PrivateKey()
    private let loop: ServiceLoop
    private let target: ServiceLoop.ClientTarget
    private let sharedToken: String
    private var connection: WebSocketConnection?
    private var nextID = 0
    var onReady: ((GatewayOperator) -> Void)?
    var onFailure: ((String) -> Void)?
    /// `(runId)` when the res for a chat.send arrives, `(runId, final)` when its final chat event does.
    var onStarted: ((String) -> Void)?
    var onFinal: ((String) -> Void)?

    init(loop: ServiceLoop, target: ServiceLoop.ClientTarget, sharedToken: String) {
        self.loop = loop
        self.target = target
        self.sharedToken = sharedToken
    }

    var deviceID: String { DeviceAuth.deviceID(forRawKey: Array(key.publicKey.rawRepresentation)) }

    func connect() { loop.connect(to: target, handler: self) }

    func send(sessionKey: String, message: String, runID: String) {
        nextID += 1
        let params = ChatSendParams(sessionKey: sessionKey, message: message, idempotencyKey: runID)
        connection?.send(text: GatewayJSON.encode(GatewayRequest(id: "c\(runID)", method: "chat.send", params: params)))
    }

    func close() { connection?.close(code: 1000) }

    func clientConnected(_ connection: WebSocketConnection) { self.connection = connection }

    func client(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard case .text(let text) = message else { return }
        if FrameSniffer.contains(text, "\"event\":\"chat\"") {
            guard FrameSniffer.contains(text, "\"state\":\"final\""), let run = FrameSniffer.string("runId", in: text) else { return }
            onFinal?(run)
        } else if FrameSniffer.contains(text, "\"type\":\"res\"") {
            guard let id = FrameSniffer.string("id", in: text) else { return }
            if id == "connect" {
                FrameSniffer.contains(text, "\"ok\":true") ? onReady?(self) : onFailure?("connect refused: \(text.prefix(300))")
            } else if id.hasPrefix("c") {
                onStarted?(String(id.dropFirst()))
            }
        } else if FrameSniffer.contains(text, "connect.challenge"), let nonce = FrameSniffer.string("nonce", in: text) {
            sendConnect(nonce: nonce)
        }
    }

    func clientClosed(_ connection: WebSocketConnection?, error: String?) {
        onFailure?(error ?? "closed")
    }

    private func sendConnect(nonce: String) {
        connection?.send(text: Self.connectFrame(key: key, nonce: nonce, sharedToken: sharedToken))
    }

    /// A signed operator `connect` (protocol 3, read and write scopes) answering `nonce`.
    static func connectFrame(key: Curve25519.Signing.PrivateKey, nonce: String, sharedToken: String) -> String {
        let raw = Array(key.publicKey.rawRepresentation)
        let params = ConnectParams.signed(
            client: ConnectParams.Client(id: "bench", version: "1", platform: "linux", mode: "cli"),
            role: "operator",
            scopes: ["operator.read", "operator.write"],
            protocols: 3...3,
            token: sharedToken,
            device: (DeviceAuth.deviceID(forRawKey: raw), Base64URL.encode(raw)),
            signedAt: Int64(Date().timeIntervalSince1970 * 1000),
            nonce: nonce
        ) { DeviceAuth.sign($0, with: key) }
        return GatewayJSON.encode(GatewayRequest(id: "connect", method: "connect", params: params))
    }
}

/// Operators keep `window` chat runs in flight each; send→started and send→final latencies.
final class GatewayRoundtripDriver {
    private let operators: [GatewayOperator]
    private let window: Int
    private let durationMicros: UInt64
    private var counter = 0
    private var sent: [String: (UInt64, GatewayOperator)] = [:]
    private var startedAt: UInt64 = 0
    private var lastFinal: UInt64 = 0
    private var result = RoundtripDriver.Result()
    private var completion: ((RoundtripDriver.Result) -> Void)?

    init(operators: [GatewayOperator], window: Int, durationSeconds: Double) {
        self.operators = operators
        self.window = window
        durationMicros = UInt64(durationSeconds * 1_000_000)
    }

    func run(completion: @escaping (RoundtripDriver.Result) -> Void) {
        self.completion = completion
        startedAt = nowMicros()
        for op in operators {
            op.onStarted = { [weak self] run in
                guard let self, let (time, _) = sent[run] else { return }
                result.ack.record(nowMicros() - time)
                result.acked += 1
            }
            op.onFinal = { [weak self] run in self?.finished(run) }
            op.onFailure = { [weak self] _ in self?.result.failures += 1 }
            for _ in 0..<window { send(on: op) }
        }
    }

    private func send(on op: GatewayOperator) {
        counter += 1
        let run = "g\(counter)"
        sent[run] = (nowMicros(), op)
        op.send(sessionKey: "bench-\(counter % 64)", message: "gateway \(counter)", runID: run)
    }

    private func finished(_ run: String) {
        guard let (time, op) = sent.removeValue(forKey: run) else { return }
        let now = nowMicros()
        result.final.record(now - time)
        result.completed += 1
        lastFinal = now
        if now - startedAt < durationMicros {
            send(on: op)
        } else if sent.isEmpty, let completion {
            self.completion = nil
            result.seconds = Double(lastFinal - startedAt) / 1e6
            for op in operators { op.onFailure = nil }
            completion(result)
        }
    }
}
