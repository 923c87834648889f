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
/// - Important: every method runs on the service thread.
public final class ClawlineDownstream: ListenerHandler {
    let settings: ClawlineSettings
    let hub: RelayHub
    let loop: any LoopScheduler
    let clock: any Clock
    let signer: HS256Token
    let assetsDirectory: String
    let logger: Logger

    var sessions: [UInt64: ClawlineSession] = [:]
    /// The socket that authenticated last for each device: assistant output for that device goes there.
    var activeSessions: [String: ClawlineSession] = [:]
    /// The socket of each device whose `pair_request` waits for a decision (the request itself is
    /// in the core's `hub.devices.pairing`).
    var pairingWaiters: [String: ClawlineSession] = [:]
    /// Devices an admin denied while they were away: their next `pair_request` learns it.
    var deniedWhileAway: Set<String> = []
    var pairLimiter: RateLimiter
    var authLimiter: RateLimiter
    var messageLimiter: RateLimiter
    var typingLimiter: RateLimiter
    var oversizeLimiter = RateLimiter(limit: 2, windowMillis: 60_000)
    var typingTimers: [String: TimerID] = [:]
    /// The admin channel's conversation, once resolved.
    var adminConversationID: String?
    private var lastEncoded: (event: BusEvent, bytes: [UInt8])?
    public internal(set) var stats = ClawlineStats()
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
        pairLimiter = RateLimiter(limit: settings.pairRequestsPerMinute, windowMillis: 60_000)
        authLimiter = RateLimiter(limit: settings.authAttemptsPerMinute, windowMillis: 60_000)
        messageLimiter = RateLimiter(limit: settings.messagesPerSecond, windowMillis: 1_000)
        typingLimiter = RateLimiter(limit: settings.typingPerSecond, windowMillis: 1_000)
        try? FileManager.default.createDirectory(atPath: assetsDirectory, withIntermediateDirectories: true)
    }

    /// The transport settings this bridge wants for its listener.
    public static func listenerConfig(_ settings: ClawlineSettings) -> ListenerConfig {
        ListenerConfig(
            name: "clawline",
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
        hub.devices.pairing.decide(for: Self.protocolName) { [weak self] request, approve, userID, completion in
            self?.carryOut(request, approve: approve, userID: userID, completion: completion)
        }
        hub.devices.pairing.observe { [weak self] event in self?.pairingChanged(event) }
        hub.devices.observe { [weak self] event in
            switch event {
            case .cutOff(let deviceID): self?.cutOff(deviceID: deviceID)
            case .changed(let device): self?.follow(device)
            }
        }
    }

    static let protocolName = "clawline"

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
        let session = ClawlineSession(connection: connection)
        session.downstream = self
        // Pairing and auth frames are small: until auth succeeds a message may not pass 64 KiB.
        connection.maxMessageBytes = min(Self.preAuthMaxBytes, connection.listenerMaxMessageBytes)
        sessions[connection.id] = session
        stats.connections += 1
    }

    public func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        let receivedAt = MonotonicClock.nanos()
        guard let session = sessions[connection.id], session.phase != .closed, !connection.isClosing else { return }
        guard case .text(let text) = message else {
            session.fail(.invalidMessage, "binary frames are not part of the protocol", close: false)
            return
        }
        switch ClientFrameDecoder.decode(text) {
        case .failure(let rejection):
            reject(rejection, on: session)
        case .success(let frame):
            handle(frame, on: session, receivedAt: receivedAt)
        }
    }

    public func webSocketClosed(_ connection: WebSocketConnection) {
        guard let session = sessions.removeValue(forKey: connection.id) else { return }
        session.phase = .closed
        stats.connections -= 1
        if let pendingDevice = session.pairingDeviceID, pairingWaiters[pendingDevice] === session {
            pairingWaiters.removeValue(forKey: pendingDevice)
        }
        guard let userID = session.userID else { return }
        if activeSessions[session.deviceID] === session { activeSessions.removeValue(forKey: session.deviceID) }
        leave(session, userID: userID)
    }

    /// Takes a socket off the core; when it was the device's last one, its user typing stops and,
    /// as Clawline v1 wants (`cancel_on_disconnect`), its turns are abandoned.
    func leave(_ session: ClawlineSession, userID: String) {
        guard session.isAttached else { return }
        session.isAttached = false
        if session.isAdmin { hub.leave(session, audience: ClawlineChannel.adminAudience) }
        guard hub.detach(session, socket: session.connection.id, userID: userID) else { return }
        if let timer = typingTimers.removeValue(forKey: session.deviceID) { loop.cancel(timer) }
        typingChanged()
        if settings.cancelOnDisconnect { hub.turns.abandon(deviceID: session.deviceID) }
    }

    func reject(_ rejection: FrameRejection, on session: ClawlineSession) {
        switch rejection.action {
        case .closeSilently:
            session.close(code: 1002, reason: "malformed JSON")
        case .error(let code, let close):
            if code == .payloadTooLarge,
                !oversizeLimiter.allow(session.deviceID.isEmpty ? "conn\(session.connection.id)" : session.deviceID, now: clock.nowMillis())
            {
                session.fail(code, rejection.message + "; too many oversized messages", messageID: rejection.messageID, close: true)
                return
            }
            session.fail(code, rejection.message, messageID: rejection.messageID, close: close)
        }
    }

    private func handle(_ frame: ClientFrame, on session: ClawlineSession, receivedAt: UInt64) {
        switch frame {
        case .pairRequest(let request):
            handlePairRequest(request, on: session)
        case .pairDecision(let deviceID, let approve, let userID):
            handlePairDecision(deviceID: deviceID, approve: approve, userID: userID, on: session)
        case .auth(let token, let deviceID, let cursor):
            handleAuth(token: token, deviceID: deviceID, cursor: cursor, on: session)
        case .message(let message):
            guard session.isAuthenticated else { return session.fail(.authFailed, "authenticate first", close: true) }
            handleMessage(message, on: session, receivedAt: receivedAt)
        case .typing(let active):
            guard session.isAuthenticated else { return session.fail(.authFailed, "authenticate first", close: true) }
            handleTyping(active, on: session)
        }
    }

    /// Sends a bus event to one socket in protocol form, holding it back while replay runs.
    func deliver(_ event: BusEvent, to session: ClawlineSession) {
        switch session.phase {
        case .replaying:
            session.buffered.append(event)
        case .live:
            send(event, to: session)
        case .fresh, .closed:
            break
        }
    }

    func send(_ event: BusEvent, to session: ClawlineSession) {
        switch event {
        case .message(let chatEvent) where chatEvent.seq <= session.highWater[chatEvent.userID] ?? 0:
            return
        case .turnFailed(let failure):
            // The device that asked hears why no answer comes; the others only see typing stop.
            guard failure.turn.deviceID == session.deviceID, failure.cause != .abandoned else { return }
            let message = failure.cause == .aborted ? "the answer was aborted" : "the assistant failed to answer"
            return session.fail(.serverError, message, messageID: failure.turn.clientID, close: false)
        case .tool:
            // Clawline has no tool frames.
            return
        default:
            break
        }
        if case .message = event, let delivery = hub.stages.finalWrite() {
            session.connection.send(utf8: encoded(event)) { delivery.written() }
        } else {
            session.connection.send(utf8: encoded(event))
        }
        stats.framesOut += 1
        // The app shows what it receives while connected: the user has read it.
        if case .message(let chatEvent) = event, chatEvent.userID == session.userID {
            hub.shown(deviceID: session.deviceID, conversationID: chatEvent.conversationID, seq: chatEvent.seq)
        }
    }

    /// The wire bytes of a bus event, encoded once per event however many devices receive it.
    private func encoded(_ event: BusEvent) -> [UInt8] {
        if let cached = lastEncoded, cached.event == event { return cached.bytes }
        let bytes: [UInt8]
        switch event {
        case .message(let chatEvent): bytes = FastFrames.message(chatEvent)
        case .streaming(let progress):
            bytes = FastFrames.streaming(
                id: progress.eventID,
                content: progress.content,
                timestamp: progress.startedAt,
                channel: channel(of: progress.conversationID)
            )
        case .assistantTyping(let conversationID, let active): bytes = FastFrames.typing(active, channel: channel(of: conversationID))
        case .turnFailed, .tool: bytes = []
        }
        lastEncoded = (event, bytes)
        return bytes
    }
}

/// Counters for `/metrics`.
public struct ClawlineStats: Sendable {
    public init() {}
    public var connections = 0
    public var framesOut = 0
    public var messagesAccepted = 0
}
