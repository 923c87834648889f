import GatewayWire
import Logging
import RelayKit
import RelayTransport

/// The live connection of one gateway identity: `GatewayLinkMachine` run by a `LinkDriver`, with
/// the device token kept in the identity's folder and each request's response handed to its
/// caller. The relay's operator accounts (`GatewayAccountTurns`), node passthrough and `clawrelay
/// chat` sit on it.
///
/// - Important: loop thread only. The device token goes out in `connect` only: never logged.
public final class GatewayLink {
    private let driver: LinkDriver<GatewayLinkMachine>
    private let identity: AccountIdentity
    private var responses: [String: (GatewayResponse<JSONValue>) -> Void] = [:]
    /// Events the link itself does not handle (`chat` for operators, `node.invoke.request` for nodes).
    public var onEvent: ((GatewayEvent<JSONValue>) -> Void)?
    /// The connection dropped (or a try failed); whatever was waiting on it has failed.
    public var onDown: (() -> Void)?

    /// `maxBackoffMillis`: the longest wait between tries (a person waiting on a terminal wants
    /// short ones).
    public init(
        name: String,
        target: ServiceLoop.ClientTarget,
        identity: AccountIdentity,
        connector: any ClientConnector,
        logger: Logger,
        clock: any Clock = SystemClock(),
        hello: LinkHello? = nil,
        maxBackoffMillis: Int = 30_000,
        onState: @escaping (LinkState, String) -> Void
    ) {
        self.identity = identity
        let machine = GatewayLinkMachine(
            endpoint: "\(target.host):\(target.port)",
            hello: hello ?? LinkHello(displayName: "clawrelay \(name)"),
            credentials: GatewayLinkMachine.Credentials(identity),
            backoff: Backoff(maxMillis: maxBackoffMillis)
        )
        driver = LinkDriver(name: name, target: target, machine: machine, connector: connector, clock: clock, logger: logger, onState: onState)
        driver.deviceID = identity.deviceID
        driver.onOwn = { [weak self] own in self?.perform(own) }
    }

    public var name: String { driver.name }
    public var deviceID: String { identity.deviceID }
    public var state: LinkState { driver.state }
    public var isReady: Bool { driver.isReady }
    /// The version the gateway agreed to (3 or 4), while ready.
    public var protocolVersion: Int64? { driver.machine.protocolVersion }

    public func connect() { driver.connect() }

    /// Closes the link for good (the device it stood for went away).
    public func stop() { driver.apply { $0.stop() } }

    /// Sends a request; `response` gets its `res` frame (not called if the link drops first, or
    /// when no socket is open).
    public func request<Params: Codable & Equatable & Sendable>(
        _ method: String,
        _ params: Params,
        response: @escaping (GatewayResponse<JSONValue>) -> Void
    ) {
        var id: String?
        driver.apply { machine in
            let request = machine.request(method, params)
            id = request.id
            return request.actions
        }
        if let id { responses[id] = response }
    }

    private func perform(_ own: GatewayLinkMachine.Own) {
        switch own {
        case .event(let event):
            onEvent?(event)
        case .response(let response):
            responses.removeValue(forKey: response.id)?(response)
        case .storeToken(let token):
            identity.token = token
        case .down:
            responses.removeAll()
            onDown?()
        }
    }
}
