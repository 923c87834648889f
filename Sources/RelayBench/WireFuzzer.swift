import Crypto
import RelayCore
import RelayTransport

/// Mutated frames on one WebSocket listener, before or after logging in, from a few sockets that
/// reconnect (and log in again) whenever the relay closes them.
final class WireFuzzer: ClientHandler {
    enum Login {
        /// Frames go out as soon as the socket is open.
        case none
        /// A signed gateway `connect` with the shared token, answered `ok` before fuzzing.
        case gateway(sharedToken: String)
    }

    struct Result: Sendable {
        var sent = 0
        var errorReplies = 0
        var connects = 0
        var closesByCode: [String: Int] = [:]
    }

    private let loop: ServiceLoop
    private let target: ServiceLoop.ClientTarget
    private let login: Login
    private let sockets: Int
    private let total: Int
    private var mutator: FrameMutator
    private let key = Curve25519.Signing.PrivateKey()
    private var live: [UInt64: WebSocketConnection] = [:]
    private var open = 0
    private var result = Result()
    private var completion: ((Result) -> Void)?

    init(loop: ServiceLoop, target: ServiceLoop.ClientTarget, login: Login, seeds: [String], sockets: Int, total: Int) {
        self.loop = loop
        self.target = target
        self.login = login
        self.sockets = sockets
        self.total = total
        mutator = FrameMutator(seeds: seeds)
    }

    func run(completion: @escaping (Result) -> Void) {
        self.completion = completion
        for _ in 0..<sockets { dial() }
        tick()
    }

    private func dial() {
        open += 1
        loop.connect(to: target, handler: self)
    }

    func clientConnected(_ connection: WebSocketConnection) {
        result.connects += 1
        if case .none = login { live[connection.id] = connection }
    }

    func client(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard case .text(let text) = message else { return }
        if FrameSniffer.contains(text, "\"type\":\"error\"") || FrameSniffer.contains(text, "\"ok\":false") { result.errorReplies += 1 }
        guard case .gateway(let token) = login, live[connection.id] == nil else { return }
        if FrameSniffer.contains(text, "connect.challenge"), let nonce = FrameSniffer.string("nonce", in: text) {
            connection.send(text: GatewayOperator.connectFrame(key: key, nonce: nonce, sharedToken: token))
        } else if FrameSniffer.contains(text, "\"id\":\"connect\""), FrameSniffer.contains(text, "\"ok\":true") {
            live[connection.id] = connection
        }
    }

    func clientClosed(_ connection: WebSocketConnection?, error: String?) {
        open -= 1
        if let connection {
            live.removeValue(forKey: connection.id)
            let code = connection.peerCloseCode.map(String.init) ?? "none"
            result.closesByCode[code, default: 0] += 1
        } else {
            result.closesByCode["connect-failed", default: 0] += 1
            // The listener is gone (the relay died): stop, the caller finds out why.
            if result.closesByCode["connect-failed", default: 0] > 50 { return finish() }
        }
        if result.sent < total, completion != nil { dial() }
    }

    private func tick() {
        for connection in live.values where result.sent < total && connection.bufferedBytes < 1 << 20 && !connection.isClosing {
            switch mutator.frame(result.sent) {
            case .text(let text): connection.send(text: text)
            case .bytes(let bytes): connection.send(utf8: bytes)
            case .binary(let bytes): connection.send(binary: bytes)
            }
            result.sent += 1
        }
        if completion == nil { return }
        if result.sent < total {
            loop.schedule(afterMillis: 1) { [weak self] in self?.tick() }
        } else {
            loop.schedule(afterMillis: 500) { [weak self] in self?.finish() }
        }
    }

    private func finish() {
        guard let completion else { return }
        self.completion = nil
        for connection in live.values { connection.close(code: 1000) }
        completion(result)
    }
}
