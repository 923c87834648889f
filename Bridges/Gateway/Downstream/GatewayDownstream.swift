import Foundation
import Logging
import RelayCore
import RelayTransport

/// Terminates OpenClaw gateway v3 clients (operators and nodes) on one listener.
///
/// - Important: every method runs on the service thread.
public final class GatewayDownstream: ListenerHandler {
    /// Protocol versions spoken: 3 up to `[gateway] max_protocol` (4 by default).
    static let minimumProtocol: Int64 = 3
    static let serverVersion = "clawrelay-" + RelayVersion.current
    static let clientModes: Set<String> = ["webchat", "cli", "ui", "backend", "node", "worker", "probe", "test"]
    static let preAuthMaxBytes = 64 * 1024
    /// Every method the relay answers, and nothing else (`hello-ok.features.methods`).
    static let methods = [
        "connect", "health", "status", "models.list", "system-presence", "gateway.identity.get", "last-heartbeat",
        "device.pair.list", "device.pair.approve", "device.pair.reject", "device.pair.remove", "device.token.rotate", "device.token.revoke",
        "node.list", "node.describe", "node.invoke", "node.invoke.result", "node.event",
        "chat.send", "chat.history", "chat.abort", "sessions.list", "gateway.discover", "device.pair", "device.unpair",
        "sessions.markRead", "sessions.patch", "backends.list",
    ]
    static let events = [
        "connect.challenge", "tick", "presence", "health", "shutdown", "device.pair.requested", "device.pair.resolved", "node.invoke.request", "chat",
        "sessions.changed",
    ]

    let settings: GatewaySettings
    let hub: RelayHub
    let loop: any LoopScheduler
    let clock: any Clock
    let logger: Logger
    let startedAt: Int64

    var sessions: [UInt64: GatewaySession] = [:]
    var nodes: [String: GatewaySession] = [:]
    var invokes: [String: PendingInvoke] = [:]
    /// Chat runs as operators are shown them, and the last core event encoded for them.
    var chatRuns: [String: ChatRunView] = [:]
    var lastChat: (event: BusEvent, payload: String?)?
    /// Conversations whose `sessions.changed` entry is being read; true = read it again after.
    var summaryReads: [String: Bool] = [:]
    /// Mirrors downstream nodes onto upstream gateways; set before `start`.
    public var passthrough: NodePassthrough? {
        didSet { passthrough?.downstream = self }
    }
    var presenceVersion: Int64 = 1
    var healthVersion: Int64 = 1
    /// The relay's own gateway identity (`gateway.identity.get`), kept in `<data_dir>/gateway.key`.
    let gatewayIdentity: AccountIdentity?
    /// This relay install's stable fingerprint (`gateway.discover`, `device.pair`, mDNS).
    let fingerprint: String

    public init(
        settings: GatewaySettings,
        hub: RelayHub,
        loop: any LoopScheduler,
        clock: any Clock,
        dataDirectory: String,
        fingerprint: String,
        logger: Logger
    ) {
        self.fingerprint = fingerprint
        self.settings = settings
        gatewayIdentity = try? AccountIdentity(directory: dataDirectory, account: "gateway")
        self.hub = hub
        self.loop = loop
        self.clock = clock
        self.logger = logger
        self.startedAt = clock.nowMillis()
    }

    public static func listenerConfig(_ settings: GatewaySettings) -> ListenerConfig {
        var config = ListenerConfig(
            name: "gateway",
            host: settings.host,
            port: settings.port,
            tlsCertificatePath: settings.tlsCertificatePath,
            tlsKeyPath: settings.tlsKeyPath,
            webSocketPaths: ["/", "/ws"],
            maxMessageBytes: settings.maxPayloadBytes,
            pingIntervalMillis: 30_000,
            pongTimeoutMillis: 90_000
        )
        config.maxBufferedBytes = settings.maxBufferedBytes
        return config
    }

    /// Starts the tick and listens to conversation changes. Loop thread.
    public func start() {
        hub.changes.observe { [weak self] change in self?.conversationChanged(change) }
        hub.devices.pairing.decide(for: Self.protocolName) { [weak self] request, approve, _, completion in
            self?.carryOut(request, approve: approve, completion: completion)
        }
        hub.devices.pairing.observe { [weak self] event in self?.pairingChanged(event) }
        hub.devices.observe { [weak self] event in
            if case .cutOff(let deviceID) = event { self?.cutOff(deviceID: deviceID, role: nil) }
        }
        scheduleTick()
        scheduleHealth()
    }

    private func scheduleTick() {
        loop.schedule(afterMillis: settings.tickIntervalMillis) { [weak self] in
            guard let self else { return }
            broadcast("tick", .object(["ts": .int(clock.nowMillis())]))
            scheduleTick()
        }
    }

    // MARK: ListenerHandler

    public func handleHTTP(_ exchange: HTTPExchange) {
        exchange.respond(.json(426, #"{"error":"this is an OpenClaw gateway WebSocket endpoint"}"#))
    }

    public func webSocketOpened(_ connection: WebSocketConnection) {
        let session = GatewaySession(connection: connection, openedAt: clock.nowMillis())
        session.downstream = self
        sessions[connection.id] = session
        // Until `connect` succeeds a message may not pass 64 KiB (refused from its header, 1009).
        connection.maxMessageBytes = min(Self.preAuthMaxBytes, connection.listenerMaxMessageBytes)
        session.send(GatewayFrame.event("connect.challenge", .object(["nonce": .string(session.nonce), "ts": .int(session.openedAt)])))
        session.handshakeTimer = loop.schedule(afterMillis: settings.handshakeTimeoutMillis) { [weak session] in
            guard let session, !session.isConnected else { return }
            session.send(GatewayFrame.event("error", GatewayError.invalid("connect was not sent within the handshake timeout").json))
            session.connection.close(code: 1008, reason: "handshake timeout")
        }
    }

    public func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard let session = sessions[connection.id], !connection.isClosing else { return }
        let bytes: [UInt8]
        switch message {
        case .text(let text): bytes = Array(text.utf8)
        case .binary(let data): bytes = data
        }
        // Answered the same way before and after connect: a frame that is not JSON (or nests too
        // deep, or holds a lone surrogate) gets an error event and a 1008 close; JSON that is not
        // a request gets an error (a response when it has an id), and closes only before connect.
        guard let frame = JSONValue.parse(bytes) else {
            session.send(GatewayFrame.event("error", GatewayError.invalid("the frame is not valid JSON").json))
            return connection.close(code: 1008, reason: "invalid frame")
        }
        guard let request = GatewayRequest(frame) else {
            let error = GatewayError.invalid("expected a req frame {type:\"req\", id, method, params?}")
            if let id = frame["id"]?.stringValue, !id.isEmpty, id.utf8.count <= 256 {
                session.send(GatewayFrame.error(id, error))
            } else {
                session.send(GatewayFrame.event("error", error.json))
            }
            if !session.isConnected { connection.close(code: 1008, reason: "invalid frame") }
            return
        }
        guard session.isConnected else {
            if request.method == "gateway.discover" { return discover(request, on: session) }
            if request.method == "device.pair" { return pairBots(request, on: session) }
            guard request.method == "connect" else {
                return session.fail(request.id, .invalid("the first request must be connect"), close: 1008)
            }
            return handleConnect(request, on: session)
        }
        dispatch(request, on: session)
    }

    public func webSocketClosed(_ connection: WebSocketConnection) {
        guard let session = sessions.removeValue(forKey: connection.id) else { return }
        if let timer = session.handshakeTimer { loop.cancel(timer) }
        guard session.isConnected else { return }
        if session.isAttached {
            session.isAttached = false
            hub.detach(session, socket: connection.id, userID: settings.userID)
        }
        if !sessions.values.contains(where: { $0.isConnected && Self.readsChat($0) }) {
            // Nobody left to show runs to: their views go (a run ending now reaches no operator).
            for view in chatRuns.values { view.deltaTimer.map(loop.cancel) }
            chatRuns.removeAll()
            lastChat = nil
        }
        if session.isNode, nodes[session.deviceID] === session {
            nodes.removeValue(forKey: session.deviceID)
            failInvokes(toNode: session.deviceID)
            passthrough?.nodeDisconnected(deviceID: session.deviceID)
        }
        presenceChanged()
    }

    /// Gateway clients hear `shutdown` and a 1012 close instead of a bare 1001.
    public func serviceWillStop() {
        broadcast("shutdown", .object(["reason": .string("relay stopping"), "restartExpectedMs": .null]))
        for session in sessions.values { session.connection.close(code: 1012, reason: "service restart") }
    }

    private func dispatch(_ request: GatewayRequest, on session: GatewaySession) {
        switch request.method {
        case "connect": session.fail(request.id, .invalid("already connected"), close: nil)
        case "device.pair.list", "device.pair.approve", "device.pair.reject", "device.pair.remove", "device.token.rotate", "device.token.revoke":
            handlePairing(request, on: session)
        case "node.list", "node.describe", "node.invoke": handleNodeRequest(request, on: session)
        case "node.invoke.result": handleInvokeResult(request, on: session)
        case "node.event": handleNodeEvent(request, on: session)
        case "chat.send", "chat.history", "chat.abort": handleChat(request, on: session)
        case "sessions.list", "sessions.markRead", "sessions.patch", "backends.list": handleSessions(request, on: session)
        case "health", "status", "models.list", "system-presence", "gateway.identity.get", "last-heartbeat": handleSystem(request, on: session)
        case "gateway.discover": discover(request, on: session)
        case "device.pair": pairBots(request, on: session)
        case "device.unpair": unpairBots(request, on: session)
        default: session.fail(request.id, .invalid("unknown method \(request.method.prefix(64))"), close: nil)
        }
    }

    // MARK: Sending

    /// Sends to one session (the transport closes it, 1008, once it holds more than `maxBufferedBytes` unsent).
    func deliver(_ text: String, to session: GatewaySession) {
        guard !session.connection.isClosing else { return }
        session.send(text)
    }

    /// An event to every connected session that passes `filter`, each with its own next seq
    /// (the payload is encoded once).
    func broadcast(_ name: String, _ payload: JSONValue, stateVersion: JSONValue? = nil, to filter: (GatewaySession) -> Bool = { _ in true }) {
        let (payloadJSON, stateJSON) = (payload.encoded(), stateVersion?.encoded())
        for session in sessions.values where session.isConnected && filter(session) {
            deliver(session.event(name, payloadJSON: payloadJSON, stateVersion: stateJSON), to: session)
        }
    }

    /// Open gateway sockets, for `/metrics`.
    public var connectionCount: Int { sessions.count }

    var stateVersion: JSONValue { .object(["presence": .int(presenceVersion), "health": .int(healthVersion)]) }

    var presenceList: JSONValue {
        .array(
            sessions.values.filter(\.isConnected).map { session in
                .object([
                    "deviceId": .string(session.deviceID), "role": .string(session.role), "roles": .array([.string(session.role)]),
                    "scopes": .array(session.scopes.sorted().map(JSONValue.string)), "clientId": .string(session.clientID),
                    "mode": .string(session.clientMode), "platform": .string(session.platform), "ts": .int(session.connectedAt),
                    "version": .string(session.version), "deviceFamily": session.deviceFamily.map(JSONValue.string) ?? .null,
                    "host": session.displayName.map(JSONValue.string) ?? .null, "reason": .string("connect"),
                ])
            }
        )
    }

    func presenceChanged() {
        presenceVersion += 1
        broadcast("presence", .object(["presence": presenceList]), stateVersion: stateVersion)
    }
}
