import ClawlineWire
import RelayCore
import RelayTransport

/// One Clawline socket: its transport connection, its protocol logic (`machine`) and its place on
/// the core's bus (a `DeviceEndpoint`, whose events the downstream writes).
///
/// - Important: loop thread only.
final class ClawlineSocket: DeviceEndpoint {
    let connection: WebSocketConnection
    var machine: ClawlineSocketMachine
    weak var downstream: ClawlineDownstream?

    init(connection: WebSocketConnection, machine: ClawlineSocketMachine) {
        self.connection = connection
        self.machine = machine
    }

    var deviceID: String { machine.deviceID }

    func deliver(_ event: BusEvent) { downstream?.deliver(event, to: self) }
}
