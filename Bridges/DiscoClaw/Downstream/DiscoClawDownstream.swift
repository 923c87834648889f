import DiscoClawWire
import Foundation
import Logging
import RelayCore
import RelayTransport

/// Terminates DiscoClaw native clients: REST for auth, conversations, messages and sync, and a
/// receive-only WebSocket for streaming. Conversations are the core's, so a DiscoClaw app sees
/// the same history as the user's devices on every other protocol.
///
/// Keeps the open sockets and performs what their machines ask; the REST routes are in the
/// `+HTTP`, `+Auth`, `+Conversations` and `+Messages` extensions.
///
/// - Important: every method runs on the service thread.
public final class DiscoClawDownstream: ListenerHandler {
    static let protocolName = "discoclaw"

    private(set) var settings: DiscoClawSettings
    let hub: RelayHub
    let clock: any Clock
    let logger: Logger
    let startedAt: Int64
    var sockets: [UInt64: DiscoClawSocket] = [:]
    /// Sockets whose token is being read from the store (a cluster node).
    var opening: Set<UInt64> = []
    var registrations: RateLimiter
    let registrar: DiscoClawRegistrar

    public init(settings: DiscoClawSettings, hub: RelayHub, clock: any Clock, logger: Logger) {
        self.settings = settings
        self.hub = hub
        self.clock = clock
        self.logger = logger
        startedAt = clock.nowMillis()
        registrations = RateLimiter(limit: settings.registrationsPerMinute, windowMillis: 60_000)
        registrar = DiscoClawRegistrar(settings: settings, devices: hub.devices)
        // A rename, archive or rebinding from any protocol (a PATCH here, a gateway
        // `sessions.patch`, `/backend`, the operator's `conversations bind`): every app re-syncs it.
        hub.changes.observe { [weak self] change in
            if case .conversation(let conversation) = change { self?.conversationUpdated(conversation.id, userID: conversation.userID) }
        }
        hub.devices.indexBearerTokens(of: Self.protocolName)
        hub.devices.observe { [weak self] event in
            switch event {
            case .cutOff(let deviceID):
                self?.closeSockets(of: deviceID)
            case .changed(let record):
                // A device paired through another node, found here: it starts offline, as at start.
                if record.protocolName == Self.protocolName, record.status == .approved { self?.registerPresence(record) }
            }
        }
    }

    /// A reload changed keys that apply live (backend, setup token, limits): the next request and
    /// turn use them; the registration limit starts over. Loop thread.
    public func reconfigure(_ settings: DiscoClawSettings) {
        self.settings = settings
        registrations = RateLimiter(limit: settings.registrationsPerMinute, windowMillis: 60_000)
    }

    public static func listenerConfig(_ settings: DiscoClawSettings) -> ListenerConfig {
        ListenerConfig(
            name: "discoclaw",
            host: settings.host,
            port: settings.port,
            tlsCertificatePath: settings.tlsCertificatePath,
            tlsKeyPath: settings.tlsKeyPath,
            webSocketPaths: ["/ws"],
            maxMessageBytes: 4096,
            pingIntervalMillis: settings.pingIntervalSeconds * 1000,
            pongTimeoutMillis: settings.pingIntervalSeconds * 2000
        )
    }

    /// The registered devices start offline (so answers they miss push). Loop thread, once the
    /// core holds the stored devices (`hub.devices.preload`).
    public func start() {
        for record in hub.devices.bearerDevices(protocolName: Self.protocolName) { registerPresence(record) }
    }

    func registerPresence(_ record: DeviceRecord) {
        hub.presence.register(deviceID: record.id, userID: record.userID, protocolName: Self.protocolName, delivery: .replay)
    }

    /// The device a presented token belongs to; a cluster node reads one paired through another
    /// node from the store (`Devices.bearer(tokenHash:protocolName:completion:)`).
    func device(presenting token: String?, completion: @escaping (DiscoClawDevice?) -> Void) {
        guard let hash = Self.tokenHash(token) else { return completion(nil) }
        hub.devices.bearer(tokenHash: hash, protocolName: Self.protocolName) { completion($0.map(DiscoClawDevice.init)) }
    }

    /// The SHA-256 of a token of a plausible size, nil otherwise.
    static func tokenHash(_ token: String?) -> String? {
        guard let token, !token.isEmpty, token.utf8.count <= 256 else { return nil }
        return Digest.sha256Hex(token)
    }

    /// Records that the device was heard from.
    func touch(_ device: DiscoClawDevice) { hub.devices.seen(device.id) }

    /// Open DiscoClaw sockets, for `/metrics`.
    public var connectionCount: Int { sockets.count }

    // MARK: WebSocket (receive-only)

    /// A token this node does not index may still be a device paired through another node: the
    /// upgrade goes through and the socket is authenticated once the store answers
    /// (`webSocketOpened`); a token known to be bad is refused here.
    public func refusal(ofWebSocket headers: RequestHeaders) -> HTTPResponse? {
        let presented = headers.bearerToken ?? headers.queryValue("token")
        if let hash = Self.tokenHash(presented), hub.devices.mayFindBearer(tokenHash: hash, protocolName: Self.protocolName) { return nil }
        return DiscoClawReply.error(presented?.isEmpty == false ? .invalidToken : .missingToken)
    }

    public func webSocketOpened(_ connection: WebSocketConnection) {
        opening.insert(connection.id)
        device(presenting: connection.headers.bearerToken ?? connection.headers.queryValue("token")) { [weak self] device in
            // A socket that closed while its token was read is gone.
            guard let self, opening.remove(connection.id) != nil else { return }
            authenticated(connection, as: device)
        }
    }

    private func authenticated(_ connection: WebSocketConnection, as device: DiscoClawDevice?) {
        let socket = DiscoClawSocket(connection: connection, downstream: self)
        // Answers still running first, with their text so far, so the client is current.
        let effects = socket.machine.opened(
            as: device.map { ($0.id, $0.userID) },
            running: device.map { hub.turns.unfinished(userID: $0.userID) } ?? []
        )
        if let device {
            sockets[connection.id] = socket
            connection.deviceID = device.id
            connection.userID = device.userID
            touch(device)
        }
        perform(effects, on: socket)
    }

    public func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        // The socket is receive-only: whatever a client sends is ignored.
    }

    public func webSocketClosed(_ connection: WebSocketConnection) {
        opening.remove(connection.id)
        guard let socket = sockets.removeValue(forKey: connection.id) else { return }
        perform(socket.machine.closed(), on: socket)
    }

    /// Closes every socket of a device (revoked).
    func closeSockets(of deviceID: String) {
        for socket in sockets.values where socket.deviceID == deviceID { perform(socket.machine.revoke(), on: socket) }
    }

    /// Tells every open socket of the user (but `deviceID`'s) that a conversation changed: they `/sync`.
    func conversationUpdated(_ conversationID: String, userID: String, except deviceID: String? = nil) {
        for socket in sockets.values where socket.deviceID != deviceID && socket.userID == userID {
            perform(socket.machine.conversationChanged(conversationID), on: socket)
        }
    }

    /// Does what a socket's machine asked.
    func perform(_ effects: [DiscoClawSocketMachine.Effect], on socket: DiscoClawSocket) {
        for effect in effects {
            switch effect {
            case .send(let event):
                socket.connection.send(utf8: DiscoClawJSON.bytes(event))
            case .close(let error):
                socket.connection.close(code: error.closeCode ?? 1008, reason: error.message)
            case .attach(let deviceID, let userID):
                socket.deviceID = deviceID
                hub.attach(socket, socket: socket.connection.id, userID: userID, protocolName: Self.protocolName, delivery: .replay)
            case .detach(_, let userID):
                hub.detach(socket, socket: socket.connection.id, userID: userID)
            }
        }
    }
}
