import GatewayWire
import Logging
import RelayCore
import RelayTransport

/// One gateway socket: its transport connection, its protocol logic (`GatewaySocketMachine`),
/// and its place on the core's bus once connected.
///
/// - Important: service thread only.
final class GatewaySocket: DeviceEndpoint {
    let connection: WebSocketConnection
    var machine: GatewaySocketMachine
    var handshakeTimer: TimerID?
    /// On the core's bus and counted in its device's presence.
    var isAttached = false
    /// Invokes held for this node until it comes back to the foreground.
    var heldInvokes: [() -> Void] = []
    /// Conversations whose `session.message` events it takes (`sessions.messages.subscribe`).
    var messageSessions: Set<String> = []
    /// Its `agent.wait` calls waiting for a run's end, with their timeouts, by a number of its own.
    var waits: [UInt64: (watch: RunWatch, timer: TimerID)] = [:]
    var lastWait: UInt64 = 0
    weak var downstream: GatewayDownstream?

    init(connection: WebSocketConnection, machine: GatewaySocketMachine) {
        self.connection = connection
        self.machine = machine
    }

    var isConnected: Bool { machine.isConnected }
    /// Who it is (once a connect verified); every method that needs a peer runs after connect.
    var peer: GatewayPeer? { machine.peer }
    var deviceID: String { machine.peer?.deviceID ?? "" }
    var isNode: Bool { machine.peer?.isNode ?? false }
    var readsChat: Bool { machine.readsChat }
    var wantsToolEvents: Bool { machine.wantsToolEvents }
    var reviewsApprovals: Bool { machine.peer?.reviewsApprovals ?? false }

    func has(_ scope: String) -> Bool { machine.peer?.has(scope) ?? false }

    /// The connect was accepted: the listener's own message limit applies from now on (64 KiB
    /// until then), and the audit knows the socket's user.
    func admitted(userID: String, logger: Logger) {
        connection.maxMessageBytes = connection.listenerMaxMessageBytes
        connection.userID = userID
        guard let peer else { return }
        let version = peer.protocolVersion
        logger.info(
            "device connected",
            metadata: [
                "protocol": "gateway", "device": "\(peer.deviceID)", "role": "\(peer.role)", "client": "\(peer.clientID)",
                "remote": "\(connection.peerAddress)", "version": "\(version)",
            ]
        )
    }

    func send(_ text: String) { connection.send(text: text) }

    /// Answers request `id` with `payload`.
    func reply<Payload: Codable & Equatable & Sendable>(_ id: String, _ payload: Payload) {
        send(GatewayJSON.encode(GatewayResponse(id: id, payload: payload)))
    }

    /// Refuses request `id`; the socket stays open.
    func fail(_ id: String, _ error: GatewayError) { downstream?.perform(machine.failed(id, error), on: self) }

    /// An event frame with this socket's next seq.
    func event(_ name: String, payloadJSON: String, stateVersion: String? = nil) -> String {
        machine.numbered(name, payloadJSON: payloadJSON, stateVersion: stateVersion)
    }

    func deliver(_ event: BusEvent) { downstream?.deliverChat(event, to: self) }
}
