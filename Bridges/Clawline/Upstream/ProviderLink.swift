import Logging
import RelayCore
import RelayTransport

/// The connection of one upstream Clawline account: performs `ProviderLinkMachine`'s actions with
/// the service loop's client WebSocket and timers, keeps the account file, and hands an
/// authenticated link's frames to `onFrame`.
///
/// - Important: loop thread only. The token goes out in `auth` and nowhere else: never logged.
final class ProviderLink: ClientHandler {
    let name: String
    private let target: ServiceLoop.ClientTarget
    private let loop: ServiceLoop
    private let logger: Logger
    private let clock: any Clock
    private let file: CredentialFile
    private let onState: (LinkState, String) -> Void
    private var machine: ProviderLinkMachine
    private var connection: WebSocketConnection?
    private var tickTimer: TimerID?
    private var lastFrameAt: Int64 = 0
    /// Authenticated; the replay `auth_result` announced comes next.
    var onUp: ((ProviderFrame.AuthResult) -> Void)?
    /// A frame arrived on the authenticated link.
    var onFrame: ((ProviderFrame) -> Void)?
    /// The authenticated link dropped.
    var onDown: (() -> Void)?
    /// The provider refused the account for good.
    var onStopped: ((String) -> Void)?

    init(
        name: String,
        target: ServiceLoop.ClientTarget,
        deviceName: String,
        file: CredentialFile,
        loop: ServiceLoop,
        logger: Logger,
        clock: any Clock = SystemClock(),
        onState: @escaping (LinkState, String) -> Void
    ) {
        self.name = name
        self.target = target
        self.loop = loop
        self.logger = logger
        self.clock = clock
        self.file = file
        self.onState = onState
        let credentials = file.credentials
        let settings = ProviderLinkMachine.Settings(
            endpoint: "\(target.host):\(target.port)",
            deviceID: credentials.deviceId,
            claimedName: deviceName,
            accountFile: file.path
        )
        machine = ProviderLinkMachine(settings: settings, token: credentials.token)
    }

    var isReady: Bool { machine.isReady }
    var state: LinkState { machine.state }
    var deviceID: String { machine.settings.deviceID }

    func connect() { perform(machine.connect()) }

    func send(_ text: String) { connection?.send(text: text) }

    /// Closes the authenticated socket and connects again at once.
    func resync(_ reason: String) {
        logger.info("reconnecting to the clawline provider to drop an unanswered message", metadata: ["account": "\(name)", "reason": "\(reason)"])
        perform(machine.resync(reason))
    }

    private func perform(_ actions: [ProviderLinkMachine.Action]) {
        for action in actions {
            switch action {
            case .connect:
                loop.connect(to: target, handler: self)
            case .send(let text):
                connection?.send(text: text)
            case .ping:
                connection?.ping()
            case .close(let code, let reason):
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
                if state == .failed { onStopped?(detail) }
            case .storePairing(let token, let userID):
                file.storePairing(token: token, userID: userID)
                logger.info("paired with the clawline provider", metadata: ["account": "\(name)", "device": "\(deviceID)", "user": "\(userID)"])
            case .up(let result):
                onUp?(result)
            case .down:
                onDown?()
            }
        }
    }

    private func tick() {
        tickTimer = nil
        let now = clock.nowMillis()
        let silent = min(connection?.millisSinceLastPong ?? 0, Int(clamping: now - lastFrameAt))
        perform(machine.tick(now: now, silentMillis: silent))
    }

    private func cancelTick() {
        tickTimer.map(loop.cancel)
        tickTimer = nil
    }

    // MARK: ClientHandler

    func clientConnected(_ connection: WebSocketConnection) {
        self.connection = connection
        connection.deviceID = deviceID
        let now = clock.nowMillis()
        lastFrameAt = now
        perform(machine.opened(cursor: file.credentials.lastMessageId, now: now))
    }

    func client(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard connection === self.connection else { return }
        let bytes: [UInt8]
        switch message {
        case .text(let text): bytes = Array(text.utf8)
        case .binary(let data): bytes = data
        }
        lastFrameAt = clock.nowMillis()
        guard let frame = ProviderFrame.decode(bytes) else {
            logger.debug("ignored a frame that is not a JSON object with a type", metadata: ["account": "\(name)", "size": "\(bytes.count)"])
            return
        }
        let wasReady = machine.isReady
        perform(machine.received(frame))
        guard wasReady, machine.isReady else { return }
        onFrame?(frame)
        if case .message(let event) = frame, event.isCursor { file.advanceCursor(to: event.id) }
    }

    func clientClosed(_ connection: WebSocketConnection?, error: String?) {
        if let connection, connection !== self.connection { return }
        let code = connection?.peerCloseCode
        self.connection = nil
        perform(machine.closed(code: code, error: error))
    }
}
