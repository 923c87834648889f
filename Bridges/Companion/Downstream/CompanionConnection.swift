import RelayCore
import RelayTransport

/// One Companion socket: its device, the sessions it holds, and how far each running answer has
/// been cut into chunks for it.
final class CompanionConnection: DeviceEndpoint {
    struct RunView {
        var chunker = ParagraphChunker()
        var startedAt: Int64
        /// The answer so far, as the last progress showed it.
        var latest = ""
    }

    let socket: WebSocketConnection
    let deviceID: String
    /// The `clientId` of its `welcome`.
    let clientID = Identifiers.newUUID()
    /// The conversations of the sessions it holds.
    var held: Set<String> = []
    /// Where `ask`/`streamStart` without a directory work (`setWorkingDirectory`).
    var workingDirectory: String?
    var runs: [String: RunView] = [:]
    var isAttached = false
    weak var downstream: CompanionDownstream?

    init(socket: WebSocketConnection, deviceID: String) {
        self.socket = socket
        self.deviceID = deviceID
    }

    var conversations: Set<String>? { held }

    func deliver(_ event: BusEvent) { downstream?.render(event, to: self, queuedAt: nil, written: nil) }

    func deliverQueued(_ events: [QueuedEvent], written: @escaping () -> Void) {
        guard let downstream else { return }
        for (index, event) in events.enumerated() {
            downstream.render(event.item.busEvent, to: self, queuedAt: event.queuedAt, written: index == events.count - 1 ? written : nil)
        }
    }

    func send(_ text: String, onWritten: (() -> Void)? = nil) {
        if let onWritten { socket.send(text: text, onWritten: onWritten) } else { socket.send(text: text) }
    }
}
