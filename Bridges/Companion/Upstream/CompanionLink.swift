import Logging
import RelayCore
import RelayTransport

/// The connection to one Companion server: performs `CompanionLinkMachine`'s actions with the
/// service loop's client WebSocket and timers, and hands a ready link's frames to `onFrame`.
///
/// - Important: loop thread only. `target.path` carries the token: it is never logged.
final class CompanionLink: ClientHandler {
    let name: String
    private let target: ServiceLoop.ClientTarget
    private let loop: ServiceLoop
    private let logger: Logger
    private let clock: any Clock
    private let onState: (LinkState, String) -> Void
    private var machine: CompanionLinkMachine
    private var connection: WebSocketConnection?
    private var tickTimer: TimerID?
    /// A frame arrived on the ready link.
    var onFrame: ((UpstreamFrame) -> Void)?
    /// The ready link dropped.
    var onDown: (() -> Void)?
    /// Once per ping interval while the link is open.
    var onTick: ((Int64) -> Void)?

    init(
        name: String,
        target: ServiceLoop.ClientTarget,
        token: String,
        loop: ServiceLoop,
        logger: Logger,
        clock: any Clock = SystemClock(),
        onState: @escaping (LinkState, String) -> Void
    ) {
        self.name = name
        self.target = target.withToken(token)
        self.loop = loop
        self.logger = logger
        self.clock = clock
        self.onState = onState
        machine = CompanionLinkMachine(endpoint: "\(target.host):\(target.port)")
    }

    var isReady: Bool { machine.isReady }
    var state: LinkState { machine.state }

    func connect() { perform(machine.connect()) }

    func send(_ text: String) { connection?.send(text: text) }

    private func perform(_ actions: [CompanionLinkMachine.Action]) {
        for action in actions {
            switch action {
            case .connect:
                loop.connect(to: target, handler: self)
            case .send(let text):
                connection?.send(text: text)
            case .close(let code, let reason):
                logger.warning("companion upstream went silent; reconnecting", metadata: ["account": "\(name)", "reason": "\(reason)"])
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
            case .down:
                onDown?()
            }
        }
    }

    private func tick() {
        tickTimer = nil
        let now = clock.nowMillis()
        onTick?(now)
        perform(machine.tick(now: now))
    }

    private func cancelTick() {
        tickTimer.map(loop.cancel)
        tickTimer = nil
    }

    // MARK: ClientHandler

    func clientConnected(_ connection: WebSocketConnection) {
        self.connection = connection
        perform(machine.opened())
    }

    func client(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard connection === self.connection else { return }
        let bytes: [UInt8]
        switch message {
        case .text(let text): bytes = Array(text.utf8)
        case .binary(let data): bytes = data
        }
        let frame = UpstreamFrame.decode(bytes) ?? .other(type: "")
        let wasReady = machine.isReady
        perform(machine.received(frame))
        if wasReady { onFrame?(frame) }
    }

    func clientClosed(_ connection: WebSocketConnection?, error: String?) {
        if let connection, connection !== self.connection { return }
        let code = connection?.peerCloseCode
        self.connection = nil
        perform(machine.closed(code: code, error: error))
    }
}
