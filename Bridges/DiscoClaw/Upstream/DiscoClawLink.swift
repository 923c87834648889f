import Logging
import RelayCore
import RelayTransport

/// The WebSocket of one DiscoClaw upstream account: `DiscoClawLinkMachine` run by a `LinkDriver`;
/// its owner (`DiscoClawAccount`) registers, catches up and takes the events it reports.
///
/// - Important: loop thread only. The socket's path carries the token: it is never logged.
typealias DiscoClawLink = LinkDriver<DiscoClawLinkMachine>

extension LinkDriver where Machine == DiscoClawLinkMachine {
    /// `target.path` is the server's `/ws`; the token goes in `?token=` (once registered, when
    /// the account has none yet).
    convenience init(
        name: String,
        target: ServiceLoop.ClientTarget,
        token: String?,
        connector: any ClientConnector,
        logger: Logger,
        clock: any Clock = SystemClock(),
        onState: @escaping (LinkState, String) -> Void
    ) {
        let machine = DiscoClawLinkMachine(endpoint: "\(target.host):\(target.port)", hasToken: token != nil)
        let authorized = token.map(target.withToken) ?? target
        self.init(name: name, target: authorized, machine: machine, connector: connector, clock: clock, logger: logger, onState: onState)
    }

    var isOpen: Bool { machine.isOpen }

    /// Registered: the socket presents `token` from now on.
    func registered(token: String) {
        guard !machine.hasToken else { return }
        target = target.withToken(token)
        apply { $0.registered() }
    }

    func registrationFailed(_ reason: String, refused: Bool) { apply { $0.registrationFailed(reason, refused: refused) } }
    func caughtUp() { apply { $0.caughtUp() } }
    func catchUpFailed(_ reason: String) { apply { $0.catchUpFailed(reason) } }
    func tokenRefused() { apply { $0.tokenRefused() } }
}
