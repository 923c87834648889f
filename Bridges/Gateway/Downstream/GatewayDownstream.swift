import Foundation
import GatewayWire
import Logging
import RelayCore
import RelayTransport

/// Terminates OpenClaw gateway v3 and v4 clients (operators and nodes) on one listener: keeps
/// the sockets, performs what each socket's `GatewaySocketMachine` asks for, and answers the
/// methods from the core.
///
/// - Important: every method runs on the service thread.
public final class GatewayDownstream: ListenerHandler {
    static let protocolName = "gateway"
    static let serverVersion = "clawrelay-" + RelayVersion.current
    static let preAuthMaxBytes = 64 * 1024

    private(set) var settings: GatewaySettings
    /// The Control UI build `settings.controlUIDirectory` names, served to plain HTTP.
    private(set) var controlUI: StaticSite?
    let hub: RelayHub
    let loop: any LoopScheduler
    let clock: any Clock
    let logger: Logger
    let startedAt: Int64

    var sockets: [UInt64: GatewaySocket] = [:]
    var nodes: [String: GatewaySocket] = [:]
    var invokes: [String: PendingInvoke] = [:]
    /// Chat runs as operators are shown them.
    let chatRuns = GatewayChatRuns()
    /// Conversations whose `sessions.changed` row is being read, with the change to read it again
    /// for afterwards (nil: no change came meanwhile).
    var summaryReads: [String: PendingSessionChange?] = [:]
    /// When each waiting device's refused connect was last logged at info (see `announcesWait`).
    var waitsLogged: [String: Int64] = [:]
    /// Mirrors downstream nodes onto upstream gateways; set before `start`.
    public var passthrough: NodePassthrough? {
        didSet { passthrough?.downstream = self }
    }
    var stateVersion = StateVersion(presence: 1, health: 1)
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
        controlUI = Self.controlUI(settings)
        gatewayIdentity = try? AccountIdentity(directory: dataDirectory, account: "gateway")
        self.hub = hub
        self.loop = loop
        self.clock = clock
        self.logger = logger
        self.startedAt = clock.nowMillis()
    }

    /// A reload changed keys that apply live (backend, the model catalog, pairing, limits): the
    /// next connection, request and turn use them. Loop thread.
    public func reconfigure(_ settings: GatewaySettings) {
        if settings.controlUIDirectory != self.settings.controlUIDirectory { controlUI = Self.controlUI(settings) }
        self.settings = settings
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
        hub.devices.pairing.decide(for: Self.protocolName) { [weak self] request, decision, completion in
            self?.carryOut(request, approve: decision.approves, completion: completion)
        }
        hub.devices.pairing.observe { [weak self] event in self?.pairingChanged(event) }
        hub.approvals.observe { [weak self] update in self?.approvalChanged(update) }
        hub.devices.observe { [weak self] event in
            if case .cutOff(let deviceID) = event { self?.cutOff(deviceID: deviceID, role: nil, reason: "device revoked") }
        }
        hub.pushes.formatters[Self.protocolName] = GatewayPush.content(gatewayDeviceID: gatewayIdentity?.deviceID)
        scheduleTick()
        scheduleHealth()
    }

    private func scheduleTick() {
        loop.schedule(afterMillis: settings.tickIntervalMillis) { [weak self] in
            guard let self else { return }
            broadcast("tick", Tick(ts: clock.nowMillis()))
            scheduleTick()
        }
    }

    // MARK: ListenerHandler

    public func webSocketOpened(_ connection: WebSocketConnection) {
        let machine = GatewaySocketMachine(
            settings: settings,
            peerAddress: connection.peerAddress,
            nonce: Identifiers.newUUID(),
            openedAt: clock.nowMillis()
        )
        let socket = GatewaySocket(connection: connection, machine: machine)
        socket.downstream = self
        sockets[connection.id] = socket
        // Until `connect` succeeds a message may not pass 64 KiB (refused from its header, 1009).
        connection.maxMessageBytes = min(Self.preAuthMaxBytes, connection.listenerMaxMessageBytes)
        perform(machine.opened(), on: socket)
    }

    public func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard let socket = sockets[connection.id], !connection.isClosing else { return }
        let bytes: [UInt8]
        switch message {
        case .text(let text): bytes = Array(text.utf8)
        case .binary(let data): bytes = data
        }
        perform(socket.machine.received(bytes, now: clock.nowMillis()), on: socket)
    }

    public func webSocketClosed(_ connection: WebSocketConnection) {
        guard let socket = sockets.removeValue(forKey: connection.id) else { return }
        if let timer = socket.handshakeTimer { loop.cancel(timer) }
        guard socket.isConnected else { return }
        releaseWaits(of: socket)
        if socket.isAttached {
            socket.isAttached = false
            hub.detach(socket, socket: connection.id, userID: settings.userID)
        }
        // Nobody left to show runs to: their views go (a run ending now reaches no operator).
        if !sockets.values.contains(where: \.readsChat) { chatRuns.removeAll(cancelling: loop) }
        if socket.isNode, nodes[socket.deviceID] === socket {
            nodes.removeValue(forKey: socket.deviceID)
            failInvokes(toNode: socket.deviceID)
            passthrough?.nodeDisconnected(deviceID: socket.deviceID)
        }
        presenceChanged()
    }

    /// Gateway clients hear `shutdown` and a 1012 close instead of a bare 1001.
    public func serviceWillStop() {
        broadcast("shutdown", Shutdown(reason: "relay stopping"))
        for socket in sockets.values { socket.connection.close(code: GatewayCloseCode.serviceRestart.rawValue, reason: "service restart") }
    }

    /// Open gateway sockets, for `/metrics`.
    public var connectionCount: Int { sockets.count }

    // MARK: Effects

    /// Carries out what a socket's machine asked for, in order.
    func perform(_ effects: [GatewaySocketMachine.Effect], on socket: GatewaySocket) {
        for effect in effects {
            switch effect {
            case .send(let frame): socket.send(frame)
            case .close(let code, let reason): socket.connection.close(code: code.rawValue, reason: reason)
            case .armHandshakeTimer(let millis):
                socket.handshakeTimer = loop.schedule(afterMillis: millis) { [weak self, weak socket] in
                    guard let self, let socket else { return }
                    perform(socket.machine.handshakeTimedOut(), on: socket)
                }
            case .cancelHandshakeTimer:
                socket.handshakeTimer.map(loop.cancel)
                socket.handshakeTimer = nil
            case .logRefusal(let error, let closing):
                socket.connection.logFailure(
                    logger,
                    protocol: Self.protocolName,
                    device: socket.deviceID,
                    code: error.code.rawValue,
                    message: error.message,
                    closingWith: closing?.rawValue
                )
            case .authorize(let attempt): authorize(attempt, on: socket)
            case .connected(let requestID, let token, let issuedAt): completeConnect(requestID, on: socket, deviceToken: token, issuedAt: issuedAt)
            case .requirePairing(let requestID, let reason): requirePairing(requestID, on: socket, reason: reason)
            case .call(let request): dispatch(request, on: socket)
            }
        }
    }

    private func dispatch(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        switch request.method {
        case "device.pair.list", "device.pair.approve", "device.pair.reject", "device.pair.remove", "device.token.rotate", "device.token.revoke":
            handlePairing(request, on: socket)
        case "node.list", "node.describe", "node.invoke": handleNodeRequest(request, on: socket)
        case "node.invoke.result": handleInvokeResult(request, on: socket)
        case "node.event": handleNodeEvent(request, on: socket)
        case "node.pending.pull", "node.pending.drain", "node.pending.ack": handleNodePending(request, on: socket)
        case "agent.wait": agentWait(request, on: socket)
        case "commands.list": listCommands(request, on: socket)
        case "chat.inject": inject(request, on: socket)
        case "agents.list", "agent.identity.get": handleAgents(request, on: socket)
        case "chat.send", "chat.history", "chat.abort": handleChat(request, on: socket)
        case "sessions.list", "sessions.markRead", "sessions.patch", "backends.list", "sessions.reset", "sessions.create", "sessions.delete",
            "sessions.compact":
            handleSessions(request, on: socket)
        case "sessions.messages.subscribe", "sessions.messages.unsubscribe": handleSessionMessages(request, on: socket)
        case "exec.approval.get", "exec.approval.list", "exec.approval.resolve", "plugin.approval.list", "plugin.approval.resolve":
            handleApprovals(request, on: socket)
        case "health", "status", "models.list", "system-presence", "gateway.identity.get", "last-heartbeat": handleSystem(request, on: socket)
        case "gateway.discover": discover(request, on: socket)
        case "device.pair": pairBots(request, on: socket)
        case "device.unpair": unpairBots(request, on: socket)
        default: socket.fail(request.id, .unknownMethod(request.method))
        }
    }

    // MARK: Sending

    /// Sends to one socket (the transport closes it, 1008, once it holds more than `maxBufferedBytes` unsent).
    func deliver(_ text: String, to socket: GatewaySocket) {
        guard !socket.connection.isClosing else { return }
        socket.send(text)
    }

    /// An event to every connected socket that passes `filter`, each with its own next seq (the
    /// payload is encoded once).
    func broadcast(
        _ name: String,
        _ payload: some Encodable,
        stateVersion: StateVersion? = nil,
        to filter: (GatewaySocket) -> Bool = { _ in true }
    ) {
        broadcast(name, payloadJSON: GatewayJSON.encode(payload), stateVersion: stateVersion.map(GatewayJSON.encode), to: filter)
    }

    func broadcast(_ name: String, payloadJSON: String, stateVersion: String? = nil, to filter: (GatewaySocket) -> Bool = { _ in true }) {
        for socket in sockets.values where socket.isConnected && filter(socket) {
            deliver(socket.event(name, payloadJSON: payloadJSON, stateVersion: stateVersion), to: socket)
        }
    }

    var presenceList: [PresenceEntry] { sockets.values.compactMap { $0.isConnected ? $0.peer?.presenceEntry : nil } }

    func presenceChanged() {
        stateVersion.presence += 1
        broadcast("presence", PresenceList(presence: presenceList), stateVersion: stateVersion)
    }
}
