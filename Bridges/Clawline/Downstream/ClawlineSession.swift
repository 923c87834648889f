import RelayCore
import RelayTransport

/// One Clawline socket: where it is in the protocol and who is on it.
final class ClawlineSession: DeviceEndpoint {
    enum Phase: Equatable {
        case fresh
        /// Authenticated; replay is being read, live events wait in `buffered`.
        case replaying
        case live
        case closed
    }

    let connection: WebSocketConnection
    let sessionID = "sess_" + Identifiers.newUUID()
    var phase = Phase.fresh
    var deviceID = ""
    var userID: String?
    /// The user's single timeline (resolved at auth).
    var conversationID = ""
    var isAdmin = false
    /// On the core's bus and counted in its device's presence.
    var isAttached = false
    /// Per audience (the user, and the admins' for an admin), events with a seq at or below this
    /// were in the replay and are not sent again.
    var highWater: [String: Int64] = [:]
    var buffered: [BusEvent] = []
    /// The device this socket asked to pair, while it waits for a decision.
    var pairingDeviceID: String?
    weak var downstream: ClawlineDownstream?

    init(connection: WebSocketConnection) {
        self.connection = connection
    }

    var isAuthenticated: Bool { phase == .replaying || phase == .live }

    func deliver(_ event: BusEvent) {
        downstream?.deliver(event, to: self)
    }

    func send(_ frame: some Encodable) {
        connection.send(text: FrameEncoder.encode(frame))
    }

    /// Sends `error` and, when asked, closes with the code the protocol gives that error.
    func fail(_ code: ClawlineErrorCode, _ message: String, messageID: String? = nil, close: Bool) {
        send(ServerFrame.ErrorFrame(code: code.rawValue, message: message, messageId: messageID))
        connection.logFailure(
            downstream?.logger,
            protocol: "clawline",
            device: deviceID,
            code: code.rawValue,
            message: message,
            closingWith: close ? code.closeCode : nil
        )
        if close { self.close(code: code.closeCode, reason: code.rawValue) }
    }

    func close(code: UInt16, reason: String) {
        connection.close(code: code, reason: reason)
    }
}
