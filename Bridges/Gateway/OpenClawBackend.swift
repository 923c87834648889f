import Foundation
import Logging
import RelayCore
import RelayTransport

/// A backend that is an operator account on an OpenClaw gateway (a real one, or another relay).
///
/// Each user turn becomes a `chat.send`; the gateway's `chat` events become turn events.
public final class OpenClawBackend: Backend {
    public let name: String
    private let loop: ServiceLoop
    private let link: LoopBound<OpenClawLink>

    /// Loop thread (the link schedules timers and connects from there).
    public init(
        name: String, target: ServiceLoop.ClientTarget, sessionKey: String?, accountsDirectory: String, loop: ServiceLoop, logger: Logger,
        onState: @escaping (LinkState, String) -> Void
    ) throws {
        self.name = name
        self.loop = loop
        let identity = try AccountIdentity(directory: accountsDirectory, account: name)
        let link = OpenClawLink(
            name: name, target: target, sessionKey: sessionKey, identity: identity, loop: loop, logger: logger, onState: onState)
        self.link = LoopBound(link, loop: loop)
    }

    /// Opens the link; it heals itself from then on. Loop thread.
    public func connect() { link.value.connect() }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnCancellation {
        let runID = Identifiers.newUUID()
        let link = self.link
        if loop.isOnLoop {
            link.value.start(turn, runID: runID, events: events)
        } else {
            loop.execute { link.value.start(turn, runID: runID, events: events) }
        }
        return TurnCancellation { [loop] in loop.execute { link.value.cancel(runID) } }
    }
}
