import Logging
import RelayCore
import RelayTransport

/// The WebSocket of one DiscoClaw upstream account: performs `DiscoClawLinkMachine`'s actions
/// with the service loop's client socket and timers, and hands the account what it must do
/// (register, catch up) and what the server sends.
///
/// - Important: loop thread only. The socket's path carries the token: it is never logged.
final class DiscoClawUpstreamLink: ClientHandler {
    let name: String
    private let target: ServiceLoop.ClientTarget
    private let loop: ServiceLoop
    private let logger: Logger
    private let onState: (LinkState, String) -> Void
    private var machine: DiscoClawLinkMachine
    private var connection: WebSocketConnection?
    private var tickTimer: TimerID?
    /// The device token the socket presents; nil until registered.
    var token: String?
    /// Register with the setup token, then call `registered()` or `registrationFailed`.
    var onRegister: (() -> Void)?
    /// A socket opened (before any of its events).
    var onOpened: (() -> Void)?
    /// Run the catch-up `/sync`, then call `caughtUp()` or `catchUpFailed`.
    var onCatchUp: (() -> Void)?
    var onEvent: ((DiscoClawUpstreamWire.Event) -> Void)?
    /// Once per ping interval while a socket is open.
    var onTick: (() -> Void)?

    /// `target.path` is the server's `/ws` (the token is added per connection).
    init(
        name: String,
        target: ServiceLoop.ClientTarget,
        token: String?,
        loop: ServiceLoop,
        logger: Logger,
        onState: @escaping (LinkState, String) -> Void
    ) {
        self.name = name
        self.target = target
        self.token = token
        self.loop = loop
        self.logger = logger
        self.onState = onState
        machine = DiscoClawLinkMachine(endpoint: "\(target.host):\(target.port)", hasToken: token != nil)
    }

    var isReady: Bool { machine.isReady }
    /// A socket is open (catching up or ready).
    var isOpen: Bool { machine.phase == .catchingUp || machine.phase == .ready }
    var state: LinkState { machine.state }

    func connect() { perform(machine.connect()) }
    func registered() { perform(machine.registered()) }
    func registrationFailed(_ reason: String, refused: Bool) { perform(machine.registrationFailed(reason, refused: refused)) }
    func caughtUp() { perform(machine.caughtUp()) }
    func catchUpFailed(_ reason: String) { perform(machine.catchUpFailed(reason)) }
    func tokenRefused() { perform(machine.tokenRefused()) }

    private func perform(_ actions: [DiscoClawLinkMachine.Action]) {
        for action in actions {
            switch action {
            case .register:
                onRegister?()
            case .connect:
                guard let token else { continue }
                loop.connect(to: target.withToken(token), handler: self)
            case .catchUp:
                onCatchUp?()
            case .ping:
                connection?.ping()
            case .close(let code, let reason):
                logger.info("closing the DiscoClaw upstream socket", metadata: ["account": "\(name)", "reason": "\(reason)"])
                connection?.close(code: code, reason: reason)
            case .armTick(let millis):
                cancelTick()
                tickTimer = loop.schedule(afterMillis: millis) { [weak self] in self?.tick() }
            case .cancelTick:
                cancelTick()
            case .armRetry(let millis):
                loop.schedule(afterMillis: millis) { [weak self] in self?.connect() }
            case .report(let state, let detail):
                onState(state, detail)
            }
        }
    }

    private func tick() {
        tickTimer = nil
        onTick?()
        perform(machine.tick(millisSinceLastPong: connection?.millisSinceLastPong ?? 0))
    }

    private func cancelTick() {
        tickTimer.map(loop.cancel)
        tickTimer = nil
    }

    // MARK: ClientHandler

    func clientConnected(_ connection: WebSocketConnection) {
        self.connection = connection
        onOpened?()
        perform(machine.opened())
    }

    func client(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard connection === self.connection, case .text(let text) = message,
            let event = DiscoClawUpstreamWire.event(Array(text.utf8))
        else { return }
        onEvent?(event)
    }

    func clientClosed(_ connection: WebSocketConnection?, error: String?) {
        if let connection, connection !== self.connection { return }
        self.connection = nil
        perform(machine.closed(error: error))
    }
}
