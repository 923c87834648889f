import RelayCore
import RelayTransport

/// One DiscoClaw WebSocket: its transport connection and its `DiscoClawSocketMachine`, on the
/// bus as its device's endpoint. The downstream performs what the machine asks.
///
/// - Important: loop thread only.
final class DiscoClawSocket: DeviceEndpoint {
    let connection: WebSocketConnection
    var machine = DiscoClawSocketMachine()
    private unowned let downstream: DiscoClawDownstream

    init(connection: WebSocketConnection, downstream: DiscoClawDownstream) {
        self.connection = connection
        self.downstream = downstream
    }

    var deviceID: String { machine.deviceID ?? "" }

    var userID: String? { machine.userID }

    func deliver(_ event: BusEvent) { downstream.perform(machine.deliver(event), on: self) }
}
