import GatewayWire
import RelayCore

/// One gateway socket's protocol logic as a value: which phase it is in, what it may do now and
/// what each frame leads to. Every input returns the effects the downstream performs (send,
/// close, arm a timer, ask the core, answer a method); nothing here touches a socket, the core
/// or a clock.
///
/// Phases: the challenge goes out and the socket waits for `connect` (only `gateway.discover`
/// and `device.pair` are answered meanwhile); a `connect` whose signature verifies is decided by
/// the core; once accepted, requests are checked against the peer's role and scopes and handed
/// to the downstream. A refused `connect` closes the socket; other refusals leave it open.
struct GatewaySocketMachine {
    enum Phase: Equatable {
        case awaitingConnect
        case connected
    }

    enum Effect: Equatable {
        case send(String)
        case close(GatewayCloseCode, reason: String)
        case armHandshakeTimer(afterMillis: Int)
        case cancelHandshakeTimer
        /// Log the refusal (at info when it closes the socket).
        case logRefusal(GatewayError, closing: GatewayCloseCode?)
        /// The signature verified: the core decides whether the device may connect.
        case authorize(ConnectAttempt)
        /// The peer connected: attach it, send `hello-ok` with this token, tell the others.
        case connected(requestID: String, deviceToken: String?, issuedAt: Int64?)
        /// The device must be approved first: a pairing request, then the refusal.
        case requirePairing(requestID: String, reason: String)
        /// A request the peer may make now: the downstream answers it.
        case call(GatewayRequest<JSONValue>)
    }

    /// The protocol versions spoken: 3 up to `[gateway] max_protocol`.
    static let minimumProtocol: Int64 = 3
    static let clientModes: Set<String> = ["webchat", "cli", "ui", "backend", "node", "worker", "probe", "test"]

    let settings: GatewaySettings
    let peerAddress: String
    /// The challenge's nonce: a connect must have signed it.
    let nonce: String
    let openedAt: Int64
    private(set) var phase = Phase.awaitingConnect
    /// Who the socket is, once a connect's signature verified.
    var peer: GatewayPeer?
    /// The last event seq sent on this socket: every socket numbers its own events 1, 2, 3, …
    private(set) var eventSeq: Int64 = 0
    /// Connected as an operator that reads chat (kept apart: every chat event asks).
    private(set) var readsChat = false
    /// Connected as a chat reader that asked for the `agent` event's tool stream (kept apart too).
    private(set) var wantsToolEvents = false

    init(settings: GatewaySettings, peerAddress: String, nonce: String, openedAt: Int64) {
        self.settings = settings
        self.peerAddress = peerAddress
        self.nonce = nonce
        self.openedAt = openedAt
    }

    var isConnected: Bool { phase == .connected }

    /// The socket opened: the challenge, and the time `connect` has.
    func opened() -> [Effect] {
        [
            .send(GatewayJSON.encode(GatewayEvent("connect.challenge", ConnectChallenge(nonce: nonce, ts: openedAt)))),
            .armHandshakeTimer(afterMillis: settings.handshakeTimeoutMillis),
        ]
    }

    /// A frame from the client (text or binary, as bytes).
    ///
    /// Answered the same way before and after connect: a frame that is not JSON (or nests too
    /// deep, or holds a lone surrogate) gets an error event and a 1008 close; JSON that is not a
    /// request gets an error (a response when it has an id), and closes only before connect.
    mutating func received(_ bytes: [UInt8], now: Int64) -> [Effect] {
        let request: GatewayRequest<JSONValue>
        switch GatewayRequest<JSONValue>.decode(bytes) {
        case .failure(.notJSON):
            return [.send(Self.errorEvent(.notJSON)), .close(.policyViolation, reason: "invalid frame")]
        case .failure(.notARequest(let id)):
            let answer = id.map { Self.errorResponse($0, .notARequest) } ?? Self.errorEvent(.notARequest)
            return [.send(answer)] + (isConnected ? [] : [.close(.policyViolation, reason: "invalid frame")])
        case .success(let decoded):
            request = decoded
        }
        guard isConnected else {
            switch request.method {
            case "gateway.discover", "device.pair": return [.call(request)]
            case "connect": return connect(request, now: now)
            default: return refusedConnect(request.id, .connectFirst)
            }
        }
        if request.method == "connect" { return failed(request.id, .alreadyConnected) }
        guard let access = Self.access[request.method] else { return failed(request.id, .unknownMethod(request.method)) }
        if let refusal = refusal(of: access) { return failed(request.id, refusal) }
        return [.call(request)]
    }

    /// The handshake time ran out.
    func handshakeTimedOut() -> [Effect] {
        guard !isConnected else { return [] }
        return [.send(Self.errorEvent(.handshakeTimeout)), .close(.policyViolation, reason: "handshake timeout")]
    }

    /// The core decided on the connect `requestID`.
    mutating func decided(_ verdict: ConnectVerdict, requestID: String, now: Int64) -> [Effect] {
        // A second connect sent before the first was decided: the first one wins.
        guard !isConnected else { return failed(requestID, .alreadyConnected) }
        switch verdict {
        case .accepted(let token, let issuedAt):
            phase = .connected
            peer?.connectedAt = now
            readsChat = peer?.readsChat ?? false
            wantsToolEvents = readsChat && peer?.wantsToolEvents == true
            return [.connected(requestID: requestID, deviceToken: token, issuedAt: issuedAt)]
        case .tokenMismatch(let canRetry): return refusedConnect(requestID, .tokenMismatch(canRetryWithDeviceToken: canRetry))
        case .deviceTokenMismatch: return refusedConnect(requestID, .deviceTokenMismatch)
        case .pairingRequired(let reason): return [.requirePairing(requestID: requestID, reason: reason)]
        case .refused(let revoked): return refusedConnect(requestID, .pairingRejected(deviceID: peer?.deviceID ?? "", revoked: revoked))
        }
    }

    /// A request failed; the socket stays open.
    func failed(_ requestID: String, _ error: GatewayError) -> [Effect] {
        [.send(Self.errorResponse(requestID, error)), .logRefusal(error, closing: nil)]
    }

    /// A connect was refused: the error, then the close its code names.
    func refusedConnect(_ requestID: String, _ error: GatewayError) -> [Effect] {
        [
            .send(Self.errorResponse(requestID, error)), .logRefusal(error, closing: error.closeCode),
            .close(error.closeCode, reason: error.code.rawValue),
        ]
    }

    /// An event frame with this socket's next seq, from a payload encoded once for every socket.
    mutating func numbered(_ name: String, payloadJSON: String, stateVersion: String? = nil) -> String {
        eventSeq += 1
        return GatewayFastFrames.event(name, payloadJSON: payloadJSON, seq: eventSeq, stateVersionJSON: stateVersion)
    }

    static func errorResponse(_ requestID: String, _ error: GatewayError) -> String {
        GatewayJSON.encode(GatewayResponse<JSONValue>(id: requestID, error: error))
    }

    static func errorEvent(_ error: GatewayError) -> String { GatewayJSON.encode(GatewayEvent("error", error)) }
}
