import Foundation
import Logging
import RelayCore
import RelayTransport

/// Terminates Claude Companion clients (the iOS app and guide clients) on one listener and maps
/// them onto the core: sessions are conversations, commands are turns, and a device away from the
/// foreground gets its sessions' events from its notification queue.
///
/// - Important: every method runs on the service thread.
public final class CompanionDownstream: ListenerHandler {
    /// A device reconnecting this soon starts with the sessions its last socket held.
    static let reconnectGraceMillis: Int64 = 30_000

    let settings: CompanionSettings
    let hub: RelayHub
    let loop: any LoopScheduler
    let clock: any Clock
    let logger: Logger
    let authToken: String
    /// `projects_root`, absolute, without symlinks.
    let projectsRoot: String
    var connections: [UInt64: CompanionConnection] = [:]
    var sessions: CompanionSessions
    var recentlyHeld: [String: (held: Set<String>, at: Int64)] = [:]
    var knownDevices: Set<String> = []
    /// HTTP requests waiting for an answer.
    var waitingRequests = 0

    public init(
        settings: CompanionSettings,
        hub: RelayHub,
        loop: any LoopScheduler,
        clock: any Clock,
        authToken: String,
        projectsRoot: String,
        logger: Logger
    ) {
        self.settings = settings
        self.hub = hub
        self.loop = loop
        self.clock = clock
        self.authToken = authToken
        self.projectsRoot = URL(fileURLWithPath: projectsRoot).standardizedFileURL.resolvingSymlinksInPath().path
        self.logger = logger
        sessions = CompanionSessions(
            maxSessions: settings.maxSessions,
            idleMillis: Int64(settings.idleSeconds) * 1000,
            backgroundIdleMillis: Int64(settings.backgroundIdleSeconds) * 1000
        )
    }

    public static func listenerConfig(_ settings: CompanionSettings) -> ListenerConfig {
        var config = ListenerConfig(
            name: "companion",
            host: settings.host,
            port: settings.port,
            tlsCertificatePath: settings.tlsCertificatePath,
            tlsKeyPath: settings.tlsKeyPath,
            webSocketPaths: ["/ws"],
            maxMessageBytes: settings.maxFrameBytes,
            pingIntervalMillis: settings.pingIntervalSeconds * 1000,
            pongTimeoutMillis: settings.pingIntervalSeconds * 2000
        )
        config.acceptsAnyWebSocketPath = true
        config.customHeaders = ["x-device-id"]
        return config
    }

    /// Registers the Companion devices the store knows (so events for their sessions queue for
    /// them before they reconnect) and starts the session sweep. Loop thread.
    public func start() {
        let user = settings.userID
        hub.pushes.formatters["companion"] = CompanionPush.content
        hub.devices.list(protocolName: "companion") { [self] result in
            guard case .success(let devices) = result else { return }
            for device in devices where device.userID == user && device.status == .approved {
                knownDevices.insert(device.id)
                hub.presence.register(deviceID: device.id, userID: user, protocolName: "companion", delivery: settings.delivery)
            }
        }
        scheduleSweep()
    }

    /// Sessions are looked at every minute, or more often when they may idle less than two minutes.
    var sweepMillis: Int { max(250, min(60_000, min(settings.idleSeconds, settings.backgroundIdleSeconds) * 500)) }

    private func scheduleSweep() {
        loop.schedule(afterMillis: sweepMillis) { [weak self] in
            guard let self else { return }
            sweep()
            scheduleSweep()
        }
    }

    func sweep() {
        let now = clock.nowMillis()
        for session in sessions.expire(now: now, isBusy: hub.turns.isBusy) {
            logger.info(
                "companion session closed after idling",
                metadata: ["session": "\(session.sessionID)", "directory": "\(session.workingDirectory)"]
            )
        }
        recentlyHeld = recentlyHeld.filter { now - $0.value.at < Self.reconnectGraceMillis }
    }

    /// Open Companion sockets and live sessions, for `/metrics`.
    public var connectionCount: Int { connections.count }
    public var liveSessionCount: Int { sessions.all.count }

    // MARK: ListenerHandler

    func isAuthorized(_ headers: RequestHeaders) -> Bool {
        guard let presented = headers.queryValue("token") ?? headers.bearerToken else { return false }
        return Digest.sha256Hex(presented) == Digest.sha256Hex(authToken)
    }

    /// `x-device-id` when sent, else a hash of the user agent (the app sends neither).
    static func deviceID(for headers: RequestHeaders) -> String {
        if let given = headers.custom["x-device-id"]?.trimmingCharacters(in: .whitespaces), !given.isEmpty, given.utf8.count <= 128 {
            return "companion:" + given
        }
        return "companion:ua:" + Digest.sha256Hex(headers.userAgent ?? "").prefix(16)
    }

    public func webSocketOpened(_ socket: WebSocketConnection) {
        guard isAuthorized(socket.headers) else { return socket.close(code: 1008, reason: "Authentication required") }
        let connection = CompanionConnection(socket: socket, deviceID: Self.deviceID(for: socket.headers))
        connection.downstream = self
        connections[socket.id] = connection
        socket.deviceID = connection.deviceID
        socket.userID = settings.userID
        let now = clock.nowMillis()
        if let recent = recentlyHeld.removeValue(forKey: connection.deviceID), now - recent.at < Self.reconnectGraceMillis {
            connection.held = recent.held
        }
        connection.send(
            CompanionWire.frame(
                "welcome",
                at: now,
                [
                    "clientId": .string(connection.clientID), "serverVersion": .string(CompanionWire.serverVersion), "claudeCodeVersion": .null,
                    "capabilities": .array(CompanionWire.capabilities.map(JSONValue.string)), "maxSessions": .int(Int64(settings.maxSessions)),
                ]
            )
        )
        rememberDevice(connection.deviceID, name: socket.headers.custom["x-device-id"] ?? socket.headers.userAgent)
        hub.attach(connection, socket: socket.id, userID: settings.userID, protocolName: "companion", delivery: settings.delivery)
        connection.isAttached = true
    }

    public func webSocket(_ socket: WebSocketConnection, received message: WebSocketMessage) {
        guard let connection = connections[socket.id], !socket.isClosing else { return }
        let bytes: [UInt8]
        switch message {
        case .text(let text): bytes = Array(text.utf8)
        case .binary(let data): bytes = data
        }
        switch CompanionRequest.parse(bytes) {
        case .failure(let error):
            connection.send(CompanionWire.error(error, requestID: nil, at: clock.nowMillis()))
        case .success(let request):
            // The app never says it is back: whatever it sends next means it is.
            if !Self.backgroundSignals.contains(request.type), hub.presence.state(of: connection.deviceID) == .background {
                hub.presence.signal(.foregrounded, deviceID: connection.deviceID)
                for conversationID in connection.held { setBackgrounded(conversationID, false) }
            }
            handle(request, on: connection)
        }
    }

    public func webSocketClosed(_ socket: WebSocketConnection) {
        guard let connection = connections.removeValue(forKey: socket.id), connection.isAttached else { return }
        connection.isAttached = false
        recentlyHeld[connection.deviceID] = (connection.held, clock.nowMillis())
        hub.detach(connection, socket: socket.id, userID: settings.userID)
    }

    /// The frames whose arrival does not mean the app is in use.
    static let backgroundSignals: Set<String> = ["client_backgrounding", "sessionBackgrounded"]

    private func handle(_ request: CompanionRequest, on connection: CompanionConnection) {
        do {
            switch request.type {
            case "ping": pong(request, on: connection)
            case "subscribe": try subscribe(request, on: connection)
            case "claudeCommand": try command(request, on: connection)
            case "ask": try ask(request, on: connection)
            case "streamStart": try streamStart(request, on: connection)
            case "streamSend": try streamSend(request, on: connection)
            case "streamClose": try streamClose(request, on: connection)
            case "setWorkingDirectory": try setWorkingDirectory(request, on: connection)
            case "registerDevice": try registerDevice(request, on: connection)
            case "client_backgrounding", "sessionBackgrounded": try background(request, on: connection, backgrounded: true)
            case "sessionForegrounded": try background(request, on: connection, backgrounded: false)
            case "permission":
                throw CompanionError(
                    code: "NO_PENDING_PERMISSION",
                    message: "no permission request is waiting for an answer",
                    sessionID: request.string("sessionId")
                )
            default:
                throw CompanionError(code: "UNKNOWN_MESSAGE_TYPE", message: "No handler registered for message type: \(request.type.prefix(64))")
            }
        } catch let error as CompanionError {
            fail(error, request, on: connection)
        } catch {
            fail(CompanionError(code: "INTERNAL_ERROR", message: "\(error)"), request, on: connection)
        }
    }

    func fail(_ error: CompanionError, _ request: CompanionRequest, on connection: CompanionConnection) {
        connection.send(CompanionWire.error(error, requestID: request.requestID, at: clock.nowMillis()))
    }

    /// Adds the device to the store once, so `clawrelay devices list` shows it with its presence.
    private func rememberDevice(_ deviceID: String, name: String?) {
        guard knownDevices.insert(deviceID).inserted else { return }
        let (user, now, claimed) = (settings.userID, clock.nowMillis(), name.map { String($0.prefix(64)) })
        // Companion clients share one token: a device is recorded the first time it shows up.
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot in
            guard snapshot.device == nil else { return }
            snapshot.device = DeviceRecord(
                id: deviceID,
                userID: user,
                protocolName: "companion",
                claimedName: claimed,
                deviceInfoJSON: nil,
                isAdmin: false,
                status: .approved,
                tokenHash: nil,
                tokenDelivered: true,
                createdAt: now,
                lastSeenAt: now
            )
        } completion: { [logger] result in
            if case .failure(let error) = result { logger.error("could not record a companion device", metadata: ["error": "\(error)"]) }
        }
    }
}
