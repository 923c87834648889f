import ClawlineWire
import Foundation
import Logging
import RelayCore
import RelayTransport

/// Terminates Clawline v1 clients on one listener and maps them onto the core: each device's
/// messages go to the user's single timeline (conversation `session:main`), or, from an admin
/// device that names `channelType: "admin"`, to the admin channel every admin device shares;
/// everything the core publishes for the user (and, to admins, for the admin channel) is written
/// to each of its sockets.
///
/// Each socket's protocol logic is its `ClawlineSocketMachine`; the downstream keeps the socket
/// map and what sockets share, and performs the machines' actions.
///
/// - Important: every method runs on the service thread.
public final class ClawlineDownstream: ListenerHandler {
    private(set) var settings: ClawlineSettings
    let hub: RelayHub
    let loop: any LoopScheduler
    let clock: any Clock
    let signer: HS256Token
    let assetsDirectory: String
    let logger: Logger

    var sockets: [UInt64: ClawlineSocket] = [:]
    /// The socket that authenticated last for each device: assistant output for that device goes
    /// there, and a newer one replaces it.
    var newest: [String: ClawlineSocket] = [:]
    /// The socket of each device whose `pair_request` waits for a decision (the request itself is
    /// in the core's `hub.devices.pairing`).
    var pairingWaiters: [String: ClawlineSocket] = [:]
    /// Devices an admin denied while they were away: their next `pair_request` learns it.
    var deniedWhileAway: Set<String> = []
    var limiters: ClawlineLimiters
    var typingTimers: [String: TimerID] = [:]
    /// The admin channel's conversation, once resolved.
    var adminConversationID: String?
    var lastEncoded: (event: BusEvent, bytes: [UInt8])?
    static let protocolName = "clawline"
    static let preAuthMaxBytes = 64 * 1024
    /// The most a replay writes at once (the newest events that fit; `replayTruncated` says so).
    static let maxReplayBytes = 16 << 20

    public init(
        settings: ClawlineSettings,
        hub: RelayHub,
        loop: any LoopScheduler,
        clock: any Clock,
        signingKey: [UInt8],
        dataDirectory: String,
        logger: Logger
    ) {
        self.settings = settings
        self.hub = hub
        self.loop = loop
        self.clock = clock
        self.signer = HS256Token(secret: signingKey)
        self.assetsDirectory = (dataDirectory as NSString).appendingPathComponent("assets")
        self.logger = logger
        limiters = ClawlineLimiters(settings)
        try? FileManager.default.createDirectory(atPath: assetsDirectory, withIntermediateDirectories: true)
    }

    /// A reload changed keys that apply live (backends, limits, timeouts): the next connection,
    /// pairing request and turn use them; the rate limits start over. The listener's own keys
    /// (address, TLS, frame size, pings) stay as it was started with. Loop thread.
    public func reconfigure(_ settings: ClawlineSettings) {
        self.settings = settings
        limiters = ClawlineLimiters(settings)
    }

    /// The transport settings this bridge wants for its listener.
    public static func listenerConfig(_ settings: ClawlineSettings) -> ListenerConfig {
        ListenerConfig(
            name: protocolName,
            host: settings.host,
            port: settings.port,
            tlsCertificatePath: settings.tlsCertificatePath,
            tlsKeyPath: settings.tlsKeyPath,
            webSocketPaths: ["/ws"],
            maxMessageBytes: settings.maxFrameBytes,
            pingIntervalMillis: settings.pingIntervalSeconds * 1000,
            pongTimeoutMillis: settings.pongTimeoutSeconds * 1000
        )
    }

    /// Starts the periodic work. Loop thread.
    public func start() {
        scheduleLimiterPruning()
        resolveAdminChannel { _ in }
        hub.devices.pairing.decide(for: Self.protocolName) { [weak self] request, decision, completion in
            self?.carryOut(request, decision, completion: completion)
        }
        hub.devices.pairing.observe { [weak self] event in self?.pairingChanged(event) }
        hub.devices.observe { [weak self] event in
            switch event {
            case .cutOff(let deviceID): self?.cutOff(deviceID: deviceID)
            case .changed(let device): self?.follow(device)
            }
        }
        // A reset (`/new` here, a gateway `sessions.reset`) gives the timeline a fresh conversation:
        // the sockets on the old one write to the new one from now on.
        hub.changes.observe { [weak self] change in
            guard case .reset(let reset, _) = change, let self else { return }
            for socket in sockets.values where socket.machine.conversationID == reset.old.id {
                socket.machine.followReset(to: reset.fresh.id)
            }
        }
    }

    /// The admin channel's conversation (owned by the admins' audience), created the first time.
    func resolveAdminChannel(_ completion: @escaping (Result<Conversation, any Error>) -> Void) {
        hub.conversations.resolve(ClawlineChannel.adminKey, userID: ClawlineChannel.adminAudience, draft: ConversationDraft(title: "Admin")) {
            [weak self] result in
            if case .success(let conversation) = result { self?.adminConversationID = conversation.id }
            completion(result)
        }
    }

    func channel(of conversationID: String) -> ClawlineChannel { conversationID == adminConversationID ? .admin : .personal }

    // MARK: ListenerHandler

    public func webSocketOpened(_ connection: WebSocketConnection) {
        let machine = ClawlineSocketMachine(messagesPerSecond: settings.messagesPerSecond, typingPerSecond: settings.typingPerSecond)
        let socket = ClawlineSocket(connection: connection, machine: machine)
        socket.downstream = self
        // Pairing and auth frames are small: until auth succeeds a message may not pass 64 KiB.
        connection.maxMessageBytes = min(Self.preAuthMaxBytes, connection.listenerMaxMessageBytes)
        sockets[connection.id] = socket
    }

    public func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        let receivedAt = MonotonicClock.nanos()
        guard let socket = sockets[connection.id], !connection.isClosing else { return }
        // Read before the machine runs: the limits must not touch the machine they are passed to.
        let (key, now) = (limitKey(of: socket), clock.nowMillis())
        func limits(_ limit: ClawlineSocketMachine.RateLimit) -> Bool { limiters.allow(limit, key: key, now: now) }
        let action: ClawlineSocketMachine.Action
        switch message {
        case .text(let text):
            switch ClientFrame.decode(text) {
            case .success(let frame):
                // The audit attributes this socket's frames (the pair_result included) to the device asking.
                if case .pairRequest(let request) = frame, connection.deviceID == nil { connection.deviceID = request.deviceId }
                action = socket.machine.received(frame, limits: limits)
            case .failure(let rejection):
                action = socket.machine.refused(rejection, limits: limits)
            }
        case .binary:
            action = socket.machine.refused(.refused(.binaryFrame), limits: limits)
        }
        perform(action, on: socket, receivedAt: receivedAt)
    }

    public func webSocketClosed(_ connection: WebSocketConnection) {
        guard let socket = sockets.removeValue(forKey: connection.id) else { return }
        if let pendingDevice = socket.machine.pairingDeviceID, pairingWaiters[pendingDevice] === socket {
            pairingWaiters.removeValue(forKey: pendingDevice)
        }
        if newest[socket.deviceID] === socket { newest.removeValue(forKey: socket.deviceID) }
        perform(socket.machine.closed(), on: socket)
    }

    /// Whose rate limits a socket's frames count against: its device's (across its sockets), or
    /// before auth its connection's.
    func limitKey(of socket: ClawlineSocket) -> String {
        socket.deviceID.isEmpty ? "conn\(socket.connection.id)" : socket.deviceID
    }
}
