import Logging
import RelayCore
import RelayTransport

/// A client account on a Claude Companion server (a real one, or another relay's `[companion]`).
///
/// To be written: welcome → one session per working directory → each turn a `claudeCommand`.
public final class CompanionBackend: Backend {
    public let name: String

    /// Loop thread. `target.path` is the server's WebSocket path; the token goes in `?token=`.
    public init(
        name: String, target: ServiceLoop.ClientTarget, token: String, workingDirectory: String?, loop: ServiceLoop, logger: Logger,
        onState: @escaping (LinkState, String) -> Void
    ) {
        self.name = name
    }

    /// Opens the link; it heals itself from then on. Loop thread.
    public func connect() {}

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnCancellation {
        events(.failed("the companion upstream is not written yet"))
        return TurnCancellation {}
    }
}
