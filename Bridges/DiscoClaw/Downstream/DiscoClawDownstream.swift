import Foundation
import Logging
import RelayCore
import RelayTransport

/// Terminates DiscoClaw native clients: REST for auth, conversations, messages and sync, and a
/// receive-only WebSocket for streaming. Conversations are the core's, so a DiscoClaw app sees
/// the same history as the user's devices on every other protocol.
///
/// - Important: every method runs on the service thread.
public final class DiscoClawDownstream: ListenerHandler {
    /// A registered device, as its bearer token finds it.
    struct Device {
        var id: String
        var userID: String
        var name: String?
        var platform: String?
        var createdAt: Int64
        var lastSeen: Int64

        init(_ record: DeviceRecord) {
            id = record.id
            userID = record.userID
            name = record.claimedName
            platform = record.deviceInfoJSON.flatMap { JSONValue.parse($0) }?["platform"]?.stringValue
            createdAt = record.createdAt
            lastSeen = record.lastSeenAt ?? record.createdAt
        }
    }

    static let protocolName = "discoclaw"
    /// Rows one `/sync` returns at most; the cursor lets the next call go on.
    static let syncLimit = 1_000
    /// Message text one `/sync` or page carries at most (always at least one message): a history of
    /// large messages is answered in parts instead of one huge body.
    static let responseBudget = 4 << 20

    let settings: DiscoClawSettings
    let hub: RelayHub
    let loop: any LoopScheduler
    let clock: any Clock
    let logger: Logger
    let startedAt: Int64
    var sockets: [UInt64: DiscoClawEndpoint] = [:]
    var registrations: RateLimiter

    public init(settings: DiscoClawSettings, hub: RelayHub, loop: any LoopScheduler, clock: any Clock, logger: Logger) {
        self.settings = settings
        self.hub = hub
        self.loop = loop
        self.clock = clock
        self.logger = logger
        startedAt = clock.nowMillis()
        registrations = RateLimiter(limit: settings.registrationsPerMinute, windowMillis: 60_000)
        // A rename, archive or rebinding from any protocol (a PATCH here, a gateway
        // `sessions.patch`, `/backend`, the operator's `conversations bind`): every app re-syncs it.
        hub.changes.observe { [weak self] change in
            if case .conversation(let conversation) = change { self?.conversationUpdated(conversation.id, userID: conversation.userID) }
        }
        hub.devices.indexBearerTokens(of: Self.protocolName)
        hub.devices.observe { [weak self] event in
            if case .cutOff(let deviceID) = event { self?.closeSockets(of: deviceID) }
        }
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

    /// The device a presented token belongs to.
    func device(presenting token: String?) -> Device? {
        guard let token, !token.isEmpty, token.utf8.count <= 256, let record = hub.devices.bearer(tokenHash: Digest.sha256Hex(token)) else {
            return nil
        }
        return Device(record)
    }

    /// Records that the device was heard from.
    func touch(_ device: Device) { hub.devices.seen(device.id) }

    /// Open DiscoClaw sockets, for `/metrics`.
    public var connectionCount: Int { sockets.count }

    // MARK: WebSocket (receive-only)

    public func refusal(ofWebSocket headers: RequestHeaders) -> HTTPResponse? {
        let presented = headers.bearerToken ?? headers.queryValue("token")
        guard device(presenting: presented) == nil else { return nil }
        return DiscoClawWire.error(401, presented?.isEmpty == false ? "Invalid token" : "Missing authorization token")
    }

    public func webSocketOpened(_ socket: WebSocketConnection) {
        guard let device = device(presenting: socket.headers.bearerToken ?? socket.headers.queryValue("token")) else {
            return socket.close(code: 1008, reason: "Invalid token")
        }
        let endpoint = DiscoClawEndpoint(socket: socket, deviceID: device.id, userID: device.userID)
        sockets[socket.id] = endpoint
        socket.deviceID = device.id
        socket.userID = device.userID
        touch(device)
        // Answers still running first, with their text so far, so the client is current.
        for progress in hub.turns.unfinished(userID: device.userID) { endpoint.catchUp(progress) }
        hub.attach(endpoint, socket: socket.id, userID: device.userID, protocolName: "discoclaw", delivery: .replay)
    }

    public func webSocket(_ socket: WebSocketConnection, received message: WebSocketMessage) {
        // The socket is receive-only: whatever a client sends is ignored.
    }

    public func webSocketClosed(_ socket: WebSocketConnection) {
        guard let endpoint = sockets.removeValue(forKey: socket.id) else { return }
        hub.detach(endpoint, socket: socket.id, userID: endpoint.userID)
    }

    /// Closes every socket of a device (revoked).
    func closeSockets(of deviceID: String) {
        for endpoint in sockets.values where endpoint.deviceID == deviceID { endpoint.socket.close(code: 1008, reason: "Device revoked") }
    }

    /// Tells every open socket of the user that a conversation changed (they `/sync`).
    func conversationUpdated(_ conversationID: String, userID: String, except deviceID: String? = nil) {
        let frame = DiscoClawWire.event("conversation.updated", ["conversationId": .string(conversationID)])
        for endpoint in sockets.values where endpoint.deviceID != deviceID && endpoint.userID == userID {
            endpoint.socket.send(text: frame)
        }
    }
}
