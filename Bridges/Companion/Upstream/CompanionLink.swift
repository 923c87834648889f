import Logging
import RelayCore
import RelayTransport

/// The connection to one Companion server: `CompanionLinkMachine` run by a `LinkDriver`; its
/// owner (`CompanionAccountTurns`) performs the frames, ticks and drops it reports.
///
/// - Important: loop thread only. `target.path` carries the token: it is never logged.
typealias CompanionLink = LinkDriver<CompanionLinkMachine>

extension LinkDriver where Machine == CompanionLinkMachine {
    /// `target.path` is the server's WebSocket path; the token goes in `?token=`.
    convenience init(
        name: String,
        target: ServiceLoop.ClientTarget,
        token: String,
        connector: any ClientConnector,
        logger: Logger,
        clock: any Clock = SystemClock(),
        onState: @escaping (LinkState, String) -> Void
    ) {
        let machine = CompanionLinkMachine(endpoint: "\(target.host):\(target.port)")
        self.init(name: name, target: target.withToken(token), machine: machine, connector: connector, clock: clock, logger: logger, onState: onState)
    }
}
