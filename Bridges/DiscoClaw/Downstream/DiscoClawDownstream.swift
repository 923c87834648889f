import Foundation
import Logging
import RelayCore
import RelayStore
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
    }

    /// `last_seen_at` is written at most this often per device.
    static let touchMillis: Int64 = 60_000
    /// Rows one `/sync` returns at most; the cursor lets the next call go on.
    static let syncLimit = 1_000
    /// Message text one `/sync` or page carries at most (always at least one message): a history of
    /// large messages is answered in parts instead of one huge body.
    static let responseBudget = 4 << 20

    let settings: DiscoClawSettings
    let store: Store
    let hub: RelayHub
    let loop: any LoopScheduler
    let clock: any Clock
    let logger: Logger
    let startedAt: Int64
    /// Device ids by SHA-256(token).
    var tokens: [String: String] = [:]
    var devices: [String: Device] = [:]
    var sockets: [UInt64: DiscoClawEndpoint] = [:]
    var registrations: RateLimiter

    public init(settings: DiscoClawSettings, store: Store, hub: RelayHub, loop: any LoopScheduler, clock: any Clock, logger: Logger) {
        self.settings = settings
        self.store = store
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

    /// Loads the registered devices before the listener serves (a token must work from the first
    /// request); their presence starts offline, so answers they miss push. Call before the loop runs.
    public func loadDevices() throws {
        let records = try store.read { db in
            try DeviceQueries.all(db).filter { $0.protocolName == "discoclaw" && $0.status == .approved && $0.tokenHash != nil }
        }
        for record in records { remember(record) }
    }

    func remember(_ record: DeviceRecord) {
        guard let hash = record.tokenHash else { return }
        let info = record.deviceInfoJSON.flatMap { JSONValue.parse($0) }
        tokens[hash] = record.id
        devices[record.id] = Device(
            id: record.id,
            userID: record.userID,
            name: record.claimedName,
            platform: info?["platform"]?.stringValue,
            createdAt: record.createdAt,
            lastSeen: record.lastSeenAt ?? record.createdAt
        )
        hub.presence.register(deviceID: record.id, userID: record.userID, protocolName: "discoclaw", delivery: .replay)
    }

    /// The device a presented token belongs to.
    func device(presenting token: String?) -> Device? {
        guard let token, !token.isEmpty, token.utf8.count <= 256, let id = tokens[Digest.sha256Hex(token)] else { return nil }
        return devices[id]
    }

    /// Records that the device was heard from (written at most once a minute).
    func touch(_ device: Device) {
        let now = clock.nowMillis()
        guard now - device.lastSeen >= Self.touchMillis else { return }
        devices[device.id]?.lastSeen = now
        let id = device.id
        store.perform({ db in try DeviceQueries.touch(db, id: id, at: now) }, completion: { _ in })
    }

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
        let endpoint = DiscoClawEndpoint(socket: socket, deviceID: device.id)
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
        guard let endpoint = sockets.removeValue(forKey: socket.id), let device = devices[endpoint.deviceID] else { return }
        hub.detach(endpoint, socket: socket.id, userID: device.userID)
    }

    /// Closes every socket of a device (revoked).
    func closeSockets(of deviceID: String) {
        for endpoint in sockets.values where endpoint.deviceID == deviceID { endpoint.socket.close(code: 1008, reason: "Device revoked") }
    }

    /// Tells every open socket of the user that a conversation changed (they `/sync`).
    func conversationUpdated(_ conversationID: String, userID: String, except deviceID: String? = nil) {
        let frame = DiscoClawWire.event("conversation.updated", ["conversationId": .string(conversationID)])
        for endpoint in sockets.values where endpoint.deviceID != deviceID && devices[endpoint.deviceID]?.userID == userID {
            endpoint.socket.send(text: frame)
        }
    }
}

extension DiscoClawDownstream: OperatorActions {
    public func resolvePending(deviceID: String, approve: Bool, userID: String?, completion: @escaping (String) -> Void) -> Bool { false }

    /// `clawrelay devices revoke`: the token stops working and the sockets close.
    public func cutOff(deviceID: String) {
        guard devices.removeValue(forKey: deviceID) != nil else { return }
        tokens = tokens.filter { $0.value != deviceID }
        closeSockets(of: deviceID)
    }
}
