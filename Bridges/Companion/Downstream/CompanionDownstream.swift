import CompanionWire
import Foundation
import Logging
import RelayCore
import RelayTransport

/// Terminates Claude Companion clients (the iOS app and guide clients) on one listener and maps
/// them onto the core: sessions are conversations, commands are turns, and a device away from the
/// foreground gets its sessions' events from its notification queue.
///
/// It keeps the socket map and performs what each socket's `CompanionSocketMachine` decides.
///
/// - Important: every method runs on the service thread.
public final class CompanionDownstream: ListenerHandler {
    /// A device reconnecting this soon starts with the sessions its last socket held.
    static let reconnectGraceMillis: Int64 = 30_000

    private(set) var settings: CompanionSettings
    let hub: RelayHub
    let loop: any LoopScheduler
    let clock: any Clock
    let logger: Logger
    let authToken: String
    let projects: CompanionProjects
    let sessions: CompanionSessionRegistry
    var sockets: [UInt64: CompanionSocket] = [:]
    var recentlyHeld: [String: (held: Set<String>, at: Int64)] = [:]
    var knownDevices: Set<String> = []
    /// Devices revoked or denylisted (`clawrelay devices revoke|deny`): refused until allowed.
    var refusedDevices: Set<String> = []
    /// HTTP requests waiting for an answer.
    var waitingRequests = 0
    /// The HTTP app's recent posts and stopped runs.
    var httpChats = CompanionHTTPChats()

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
        self.logger = logger
        projects = CompanionProjects(root: projectsRoot)
        sessions = CompanionSessionRegistry(hub: hub, settings: settings, projects: projects, clock: clock, logger: logger)
    }

    /// A reload changed keys that apply live (backend, routes, session and queue limits): new
    /// sessions, connections and commands use them. Loop thread.
    public func reconfigure(_ settings: CompanionSettings) {
        self.settings = settings
        sessions.reconfigure(settings)
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
        // The HTTP app's devices get each answer as its own push, never a wake-up.
        hub.pushes.answersOnly.insert(Self.httpDeviceProtocol)
        hub.devices.list(protocolName: "companion") { [self] result in
            guard case .success(let devices) = result else { return }
            for device in devices where device.status.refusesPairing { refusedDevices.insert(device.id) }
            for device in devices where device.userID == user && device.status == .approved {
                knownDevices.insert(device.id)
                hub.presence.register(deviceID: device.id, userID: user, protocolName: "companion", delivery: settings.delivery)
            }
        }
        hub.devices.observe { [weak self] event in self?.deviceChanged(event) }
        // A reset session (`/new`, a gateway `sessions.reset`) is a fresh conversation under the
        // same session id: sockets that held the old one hold the new one.
        hub.changes.observe { [weak self] change in
            guard case .reset(let reset, _) = change, let self else { return }
            sessions.follow(reset)
            for socket in sockets.values where socket.machine.held.contains(reset.old.id) {
                socket.machine.release(reset.old.id)
                socket.machine.hold(reset.fresh.id)
            }
        }
        scheduleSweep()
    }

    /// A revoked device's sockets close and it is refused until `clawrelay devices allow`, after
    /// which it is recorded again the next time it shows up (the shared token is its pairing).
    private func deviceChanged(_ event: DeviceEvent) {
        switch event {
        case .cutOff(let deviceID):
            guard deviceID.hasPrefix("companion:") else { return }
            refusedDevices.insert(deviceID)
            for socket in sockets.values where socket.deviceID == deviceID { perform(socket.machine.revoked(), on: socket) }
        case .changed(let device):
            guard device.protocolName == "companion" || device.protocolName == Self.httpDeviceProtocol, !device.status.refusesPairing else { return }
            refusedDevices.remove(device.id)
            if device.status != .approved { knownDevices.remove(device.id) }
        }
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
        for session in sessions.expire() {
            logger.info(
                "companion session closed after idling",
                metadata: ["session": "\(session.sessionID)", "directory": "\(session.workingDirectory)"]
            )
        }
        let now = clock.nowMillis()
        recentlyHeld = recentlyHeld.filter { now - $0.value.at < Self.reconnectGraceMillis }
    }

    /// Open Companion sockets and live sessions, for `/metrics`.
    public var connectionCount: Int { sockets.count }
    public var liveSessionCount: Int { sessions.table.all.count }

    /// The session id a conversation has for Companion clients.
    func sessionID(of conversationID: String) -> String { sessions.sessionID(of: conversationID) }

    // MARK: ListenerHandler

    public func webSocketOpened(_ connection: WebSocketConnection) {
        let deviceID = CompanionAuth.deviceID(for: connection.headers)
        let now = clock.nowMillis()
        var held: Set<String> = []
        if let recent = recentlyHeld[deviceID], now - recent.at < Self.reconnectGraceMillis { held = recent.held }
        let machine = CompanionSocketMachine(
            deviceID: deviceID,
            clientID: Identifiers.newUUID(),
            maxSessions: settings.maxSessions,
            agentVersion: hub.router.backend(named: settings.backend)?.agentVersion,
            projects: projects,
            held: held
        )
        let socket = CompanionSocket(connection: connection, machine: machine)
        let authorized = CompanionAuth.refusal(connection.headers, token: authToken) == nil
        perform(socket.machine.opened(authorized: authorized, revoked: refusedDevices.contains(deviceID), now: now), on: socket)
    }

    public func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard let socket = sockets[connection.id], !connection.isClosing else { return }
        let bytes: [UInt8]
        switch message {
        case .text(let text): bytes = Array(text.utf8)
        case .binary(let data): bytes = data
        }
        let inBackground = hub.presence.state(of: socket.deviceID) == .background
        perform(socket.machine.received(bytes, now: clock.nowMillis(), deviceInBackground: inBackground), on: socket)
    }

    public func webSocketClosed(_ connection: WebSocketConnection) {
        guard let socket = sockets.removeValue(forKey: connection.id) else { return }
        perform(socket.machine.closed(), on: socket)
    }

    /// Adds the device to the store once, so `clawrelay devices list` shows it with its presence.
    func rememberDevice(_ deviceID: String, name: String?, protocolName: String = "companion") {
        guard knownDevices.insert(deviceID).inserted else { return }
        let (user, now, claimed) = (settings.userID, clock.nowMillis(), name.map { String($0.prefix(64)) })
        // Companion clients share one token: a device is recorded the first time it shows up (or
        // again, once allowed after a revocation).
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot in
            if snapshot.device?.status == .unpaired { snapshot.device?.status = .approved }
            guard snapshot.device == nil else { return }
            snapshot.device = DeviceRecord(
                id: deviceID,
                userID: user,
                protocolName: protocolName,
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
