import Logging
import RelayCore
import RelayTransport

/// A client device account on a Clawline provider (a real one, or another relay's `[clawline]`):
/// the `Backend` of the `clawline` kind.
///
/// The first start pairs (the provider's admin approves the device); the token, device id and
/// replay cursor live in its `ClawlineAccountFile` (0600). Each turn is sent as a `message` and
/// answered by the provider's assistant; since the provider keeps one timeline per user, turns run
/// one at a time in arrival order (see `ClawlineTurnBook`).
public final class ClawlineAccount: Backend {
    public let name: String
    private let loop: ServiceLoop
    private let turns: LoopBound<ClawlineAccountTurns>

    /// Reads or creates the account file; throws when it cannot (named in the error).
    public init(
        name: String,
        target: ServiceLoop.ClientTarget,
        deviceName: String,
        accountsDirectory: String,
        loop: ServiceLoop,
        logger: Logger,
        onState: @escaping (LinkState, String) -> Void
    ) throws {
        self.name = name
        self.loop = loop
        let file = try ClawlineAccountFile(directory: accountsDirectory, account: name, logger: logger)
        let link = ClawlineLink(name: name, target: target, deviceName: deviceName, file: file, connector: loop, logger: logger, onState: onState)
        turns = LoopBound(ClawlineAccountTurns(link: link, loop: loop, clock: SystemClock()), loop: loop)
    }

    /// Opens the link; it heals itself from then on. Loop thread.
    public func connect() { turns.value.link.connect() }

    /// Closes the link for good (a reload removed or replaced the account). Loop thread.
    public func retire() { turns.value.link.stop() }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle {
        turns.startTurn(turn, events: events)
    }
}
