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

    /// The device it was attached as, kept after its machine closed: the detach that closing
    /// asks for names it (presence, bus and queue go by the endpoint's device id).
    var deviceID = ""

    var userID: String? { machine.userID }

    func deliver(_ event: BusEvent) { downstream.perform(machine.deliver(event), on: self) }
}
