import RelayCore
import RelayTransport

/// One Companion socket: its transport connection, its protocol machine, and its place on the
/// core's bus (the conversations it holds are the ones it hears live).
///
/// - Important: loop thread only.
final class CompanionSocket: DeviceEndpoint {
    let connection: WebSocketConnection
    var machine: CompanionSocketMachine
    weak var downstream: CompanionDownstream?

    init(connection: WebSocketConnection, machine: CompanionSocketMachine) {
        self.connection = connection
        self.machine = machine
    }

    var deviceID: String { machine.deviceID }

    var conversations: Set<String>? { machine.held }

    func deliver(_ event: BusEvent) {
        render(event, queuedAt: nil, written: nil)
        if case .approval(.requested) = event { downstream?.showPrompt(.asked, on: self) }
    }

    func deliverQueued(_ events: [QueuedEvent], written: @escaping () -> Void) {
        for (index, event) in events.enumerated() {
            render(event.item.busEvent, queuedAt: event.queuedAt, written: index == events.count - 1 ? written : nil)
        }
    }

    /// Writes a core event as frames; `written` runs once the last one is on the wire.
    private func render(_ event: BusEvent, queuedAt: Int64?, written: (() -> Void)?) {
        guard let downstream else { return }
        let frames: [String]
        if case .assistantTyping = event {
            frames = []
        } else {
            let sessionID = downstream.sessionID(of: event.conversationID)
            frames = machine.render(event, sessionID: sessionID, now: downstream.clock.nowMillis(), queuedAt: queuedAt)
        }
        for (index, frame) in frames.enumerated() {
            send(frame, onWritten: index == frames.count - 1 ? written : nil)
        }
        if frames.isEmpty { written?() }
    }

    func send(_ text: String, onWritten: (() -> Void)? = nil) {
        if let onWritten { connection.send(text: text, onWritten: onWritten) } else { connection.send(text: text) }
    }
}
