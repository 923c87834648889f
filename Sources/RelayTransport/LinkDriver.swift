import Logging
import RelayKit

/// Runs one upstream link on the loop: performs its `LinkMachine`'s actions with a client socket
/// (opened through a `ClientConnector`) and the loop's timers, feeds the machine what the socket
/// and the timers do, and hands the protocol's own actions to `onOwn`. Every upstream link is
/// one of these with its protocol's machine.
///
/// - Important: loop thread only. `target.path` may carry a token: it is never logged.
public final class LinkDriver<Machine: LinkMachine>: ClientHandler {
    /// The account, in logs.
    public let name: String
    /// Where `connect` goes; a protocol that learns its token later sets it before connecting.
    public var target: ServiceLoop.ClientTarget
    /// Copied into each socket for the audit records.
    public var deviceID: String?
    public private(set) var machine: Machine
    /// Performs the protocol's own actions (the link's owner sets it).
    public var onOwn: ((Machine.Own) -> Void)?
    private let connector: any ClientConnector
    private let clock: any Clock
    private let logger: Logger
    private let onState: (LinkState, String) -> Void
    private var connection: WebSocketConnection?
    private var tickTimer: TimerID?

    public init(
        name: String,
        target: ServiceLoop.ClientTarget,
        machine: Machine,
        connector: any ClientConnector,
        clock: any Clock,
        logger: Logger,
        onState: @escaping (LinkState, String) -> Void
    ) {
        self.name = name
        self.target = target
        self.machine = machine
        self.connector = connector
        self.clock = clock
        self.logger = logger
        self.onState = onState
    }

    public var state: LinkState { machine.state }
    public var isReady: Bool { machine.isReady }

    /// Starts the link; it heals itself from then on.
    public func connect() { perform(machine.connect()) }

    /// Lets the link go for good (`LinkMachine.stop`).
    public func stop() { perform(machine.stop()) }

    /// Feeds the machine an input of its protocol's own (a registration's outcome, a request) and
    /// performs what it returns.
    public func apply(_ input: (inout Machine) -> [Machine.Action]) { perform(input(&machine)) }

    /// Sends on the open socket; nothing when none is open.
    public func send(_ text: String) { connection?.send(text: text) }

    private func perform(_ actions: [Machine.Action]) {
        for action in actions {
            switch action {
            case .connect:
                connector.connect(to: target, handler: self)
            case .send(let text):
                connection?.send(text: text)
            case .ping:
                connection?.ping()
            case .close(let code, let reason):
                guard let connection else { continue }
                logger.info("closing an upstream socket", metadata: ["account": "\(name)", "code": "\(code)", "reason": "\(reason)"])
                connection.close(code: code, reason: reason)
            case .armTick(let millis):
                cancelTick()
                tickTimer = connector.schedule(afterMillis: millis) { [weak self] in self?.tick() }
            case .cancelTick:
                cancelTick()
            case .armRetry(let millis):
                connector.schedule(afterMillis: millis) { [weak self] in self?.connect() }
            case .report(let state, let detail):
                onState(state, detail)
            case .own(let own):
                onOwn?(own)
            }
        }
    }

    private func tick() {
        tickTimer = nil
        perform(machine.tick(now: clock.nowMillis(), silentMillis: connection?.millisSinceLastPong ?? 0))
    }

    private func cancelTick() {
        tickTimer.map(connector.cancel)
        tickTimer = nil
    }

    // MARK: ClientHandler

    public func clientConnected(_ connection: WebSocketConnection) {
        self.connection = connection
        connection.deviceID = deviceID
        perform(machine.opened(now: clock.nowMillis()))
    }

    public func client(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard connection === self.connection else { return }
        let bytes: [UInt8]
        switch message {
        case .text(let text): bytes = Array(text.utf8)
        case .binary(let data): bytes = data
        }
        perform(machine.received(bytes, now: clock.nowMillis()))
    }

    public func clientClosed(_ connection: WebSocketConnection?, error: String?) {
        if let connection, connection !== self.connection { return }
        let code = connection?.peerCloseCode
        self.connection = nil
        perform(machine.closed(code: code, error: error))
    }
}
