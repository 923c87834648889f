import ClawlineWire
import Logging
import RelayCore
import RelayTransport

/// The connection of one upstream Clawline account: `ClawlineLinkMachine` run by a `LinkDriver`,
/// keeping the account file (pairing, replay cursor) and handing the authenticated link's frames
/// to `onFrame`.
///
/// - Important: loop thread only. The token goes out in `auth` and nowhere else: never logged.
final class ClawlineLink {
    private let driver: LinkDriver<ClawlineLinkMachine>
    private let file: ClawlineAccountFile
    private let logger: Logger
    /// Authenticated; the replay `auth_result` announced comes next.
    var onUp: ((ServerFrame.AuthResult) -> Void)?
    /// A frame arrived on the authenticated link.
    var onFrame: ((ServerFrame) -> Void)?
    /// The authenticated link dropped.
    var onDown: (() -> Void)?
    /// The provider refused the account for good.
    var onStopped: ((String) -> Void)?

    init(
        name: String,
        target: ServiceLoop.ClientTarget,
        deviceName: String,
        file: ClawlineAccountFile,
        connector: any ClientConnector,
        logger: Logger,
        clock: any Clock = SystemClock(),
        onState: @escaping (LinkState, String) -> Void
    ) {
        self.file = file
        self.logger = logger
        let contents = file.contents
        let settings = ClawlineLinkMachine.Settings(
            endpoint: "\(target.host):\(target.port)",
            deviceID: contents.deviceId,
            claimedName: deviceName,
            accountFile: file.path
        )
        let machine = ClawlineLinkMachine(settings: settings, token: contents.token, cursor: contents.lastMessageId)
        driver = LinkDriver(name: name, target: target, machine: machine, connector: connector, clock: clock, logger: logger, onState: onState)
        driver.deviceID = contents.deviceId
        driver.onOwn = { [weak self] own in self?.perform(own) }
    }

    var name: String { driver.name }
    var state: LinkState { driver.state }
    var deviceID: String { driver.machine.settings.deviceID }

    func connect() { driver.connect() }

    func stop() { driver.stop() }

    func send(_ text: String) { driver.send(text) }

    /// Closes the authenticated socket and connects again at once.
    func resync(_ reason: String) {
        logger.info("reconnecting to the clawline provider to drop an unanswered message", metadata: ["account": "\(name)", "reason": "\(reason)"])
        driver.apply { $0.resync(reason) }
    }

    private func perform(_ own: ClawlineLinkMachine.Own) {
        switch own {
        case .storePairing(let token, let userID):
            file.storePairing(token: token, userID: userID)
            logger.info("paired with the clawline provider", metadata: ["account": "\(name)", "device": "\(deviceID)", "user": "\(userID)"])
        case .up(let result):
            onUp?(result)
        case .frame(let frame):
            onFrame?(frame)
        case .advanceCursor(let id):
            file.advanceCursor(to: id)
        case .down:
            onDown?()
        case .stopped(let detail):
            onStopped?(detail)
        case .undecodable(let size):
            logger.debug("ignored a frame that is not a JSON object with a type", metadata: ["account": "\(name)", "size": "\(size)"])
        }
    }
}
