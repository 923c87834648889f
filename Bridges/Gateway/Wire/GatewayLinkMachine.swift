import RelayKit

/// The protocol of one link to an OpenClaw gateway (a real one, or another relay's `[gateway]`),
/// as a pure state machine: answer `connect.challenge` with a signed `connect` (payload v3; v2 once
/// the gateway refused a v3 signature), take `hello-ok` and the gateway's tick policy, match
/// requests to their responses and hand events over. Connecting, the watchdog (pings, two tick
/// intervals of silence), backoff and reports are its `LinkLifecycle`'s; `GatewayLink` runs it.
///
/// - Important: the gateway's wire only (no downstream, no store): `clawrelay chat` uses it as it is.
public struct GatewayLinkMachine: LinkMachine {
    /// One socket: how far its handshake went and the requests waiting for an answer on it.
    struct Socket: Equatable, Sendable {
        enum Step: Equatable, Sendable {
            case awaitingChallenge
            /// `connect` went out as this request.
            case awaitingHello(requestID: String)
            case ready(protocolVersion: Int64)
        }

        var step = Step.awaitingChallenge
        var pending: Set<String> = []
    }

    public enum Own: Equatable, Sendable {
        /// An event the link does not handle itself (`chat`, `node.invoke.request`, `tick`, …).
        case event(GatewayEvent<JSONValue>)
        /// The `res` frame answering a `request`.
        case response(GatewayResponse<JSONValue>)
        /// The device token to keep; empty: drop the stored one.
        case storeToken(String)
        /// The try ended (socket closed or never opened): waiting requests get no answer.
        case down
    }

    /// Who the device is and how it proves it.
    public struct Credentials {
        public var deviceID: String
        /// Base64url raw Ed25519 key.
        public var publicKey: String
        /// The device token; empty before pairing.
        public var token: String
        /// Signs a payload with the device key (base64url).
        public var sign: (String) -> String

        public init(deviceID: String, publicKey: String, token: String, sign: @escaping (String) -> String) {
            self.deviceID = deviceID
            self.publicKey = publicKey
            self.token = token
            self.sign = sign
        }

        /// An identity's key and stored token.
        public init(_ identity: AccountIdentity) {
            self.init(deviceID: identity.deviceID, publicKey: identity.publicKey, token: identity.token, sign: identity.sign)
        }
    }

    /// The tick until `hello-ok` brings the gateway's policy; the handshake must end within it.
    static let handshakeMillis = 15_000
    /// The tick a gateway gets when its policy names none.
    static let defaultTickMillis = 30_000

    let hello: LinkHello
    var lifecycle: LinkLifecycle<Socket>
    var credentials: Credentials
    /// The gateway refused a v3 signature once: sign v2 from then on.
    var signsV2 = false
    private var requests = 0

    public init(
        endpoint: String,
        hello: LinkHello,
        credentials: Credentials,
        backoff: Backoff = Backoff(),
        random: @escaping (Int) -> Int = Backoff.systemRandom
    ) {
        self.hello = hello
        self.credentials = credentials
        let timing = LinkTiming(
            tickMillis: Self.handshakeMillis,
            watchdog: .silence(millis: 2 * Self.handshakeMillis),
            handshakeTimeoutMillis: Self.handshakeMillis,
            handshakeCloseReason: "handshake timeout",
            silenceCloseReason: "tick timeout"
        )
        lifecycle = LinkLifecycle(endpoint: endpoint, timing: timing, backoff: backoff, random: random)
    }

    public var endpoint: String { lifecycle.endpoint }
    public var state: LinkState { lifecycle.state }
    public var isReady: Bool { lifecycle.isEstablished }
    /// The version the gateway agreed to (3 or 4), while ready.
    public var protocolVersion: Int64? { if case .ready(let version) = lifecycle.session?.step { version } else { nil } }

    public mutating func connect() -> [Action] { lifecycle.connect(reporting: "connecting to \(endpoint)") }

    /// The gateway speaks first (`connect.challenge`).
    public mutating func opened(now: Int64) -> [Action] { lifecycle.opened(now: now, session: Socket(), awaiting: "hello-ok") }

    public mutating func received(_ bytes: [UInt8], now: Int64) -> [Action] {
        lifecycle.heard(now: now)
        guard let json = JSONValue.parse(bytes), let frame = GatewayFrame(json) else { return [] }
        return received(frame, now: now)
    }

    mutating func received(_ frame: GatewayFrame, now: Int64) -> [Action] {
        guard var socket = lifecycle.session else { return [] }
        switch frame {
        case .event(let event):
            guard event.event == "connect.challenge" else { return [.own(.event(event))] }
            guard socket.step == .awaitingChallenge, let challenge = GatewayJSON.decode(ConnectChallenge.self, from: event.payload ?? .null)
            else { return [] }
            let id = nextRequestID()
            socket.step = .awaitingHello(requestID: id)
            lifecycle.update(socket)
            return [
                .send(GatewayJSON.encode(GatewayRequest(id: id, method: "connect", params: connectParams(nonce: challenge.nonce, signedAt: now))))
            ]
        case .response(let response):
            if socket.step == .awaitingHello(requestID: response.id) { return helloAnswered(response) }
            guard socket.pending.remove(response.id) != nil else { return [] }
            lifecycle.update(socket)
            return [.own(.response(response))]
        case .request:
            return []
        }
    }

    /// Sends a request on the open socket; its `res` comes back as `.own(.response)`. No
    /// socket: nothing is sent and `id` is nil.
    public mutating func request<Params: Codable & Equatable & Sendable>(_ method: String, _ params: Params) -> (id: String?, actions: [Action]) {
        guard var socket = lifecycle.session else { return (nil, []) }
        let id = nextRequestID()
        socket.pending.insert(id)
        lifecycle.update(socket)
        return (id, [.send(GatewayJSON.encode(GatewayRequest(id: id, method: method, params: params)))])
    }

    public mutating func tick(now: Int64, silentMillis: Int) -> [Action] { lifecycle.tick(now: now, silentMillis: silentMillis) }

    public mutating func closed(code: UInt16?, error: String?) -> [Action] {
        let ended = lifecycle.isOpen || lifecycle.phase == .connecting
        return (ended ? [.own(.down)] : []) + lifecycle.closed(code: code, error: error)
    }

    /// Closes the link for good (the device it stood for went away); reports nothing.
    public mutating func stop() -> [Action] {
        let ended = lifecycle.isOpen || lifecycle.phase == .connecting
        return (ended ? [.own(.down)] : []) + lifecycle.stop(nil)
    }

    private mutating func nextRequestID() -> String {
        requests += 1
        return "r\(requests)"
    }
}
