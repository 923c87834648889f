import Logging
import RelayCore
import RelayTransport

/// A client account on a Claude Companion server (a real one, or another relay's `[companion]`).
///
/// The link waits for `welcome`, opens one upstream session per working directory and sends each
/// turn as a `claudeCommand`; `streamChunk` text becomes progress, `claudeResponse` the answer.
public final class CompanionAccount: Backend {
    public let name: String
    private let loop: ServiceLoop
    private let runs: LoopBound<CompanionAccountTurns>

    /// Loop thread. `target.path` is the server's WebSocket path; the token goes in `?token=`.
    public init(
        name: String,
        target: ServiceLoop.ClientTarget,
        token: String,
        workingDirectory: String?,
        loop: ServiceLoop,
        logger: Logger,
        onState: @escaping (LinkState, String) -> Void
    ) {
        self.name = name
        self.loop = loop
        let link = CompanionLink(name: name, target: target, token: token, connector: loop, logger: logger, onState: onState)
        runs = LoopBound(CompanionAccountTurns(link: link, workingDirectory: workingDirectory, clock: SystemClock()), loop: loop)
    }

    /// Opens the link; it heals itself from then on. Loop thread.
    public func connect() { runs.value.link.connect() }

    /// Closes the link for good (a reload removed or replaced the account). Loop thread.
    public func retire() { runs.value.link.stop() }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle {
        runs.startTurn(turn, events: events)
    }
}
