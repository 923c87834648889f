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
    var isAdmin = false
    /// Events with a seq at or below this were in the replay and are not sent again.
    var highWater: Int64 = 0
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
        if close { self.close(code: code.closeCode, reason: code.rawValue) }
    }

    func close(code: UInt16, reason: String) {
        connection.close(code: code, reason: reason)
    }
}

/// Per device (not per socket): the FIFO of turns waiting and the one being answered.
final class DeviceLane {
    struct QueuedTurn {
        var clientID: String
        var text: String
    }

    final class ActiveTurn {
        let clientID: String
        let eventID: String
        let conversationID: String
        var content = ""
        var cancellation: TurnCancellation?
        var inactivityTimer: TimerID?
        var startedAt: Int64

        init(clientID: String, eventID: String, conversationID: String, startedAt: Int64) {
            self.clientID = clientID
            self.eventID = eventID
            self.conversationID = conversationID
            self.startedAt = startedAt
        }
    }

    let deviceID: String
    let userID: String
    var queue: [QueuedTurn] = []
    var active: ActiveTurn?
    /// Messages handed to the store and not yet answered; they count toward the queue cap.
    var accepting = 0

    init(deviceID: String, userID: String) {
        self.deviceID = deviceID
        self.userID = userID
    }

    func knows(_ clientID: String) -> Bool {
        active?.clientID == clientID || queue.contains { $0.clientID == clientID }
    }
}
