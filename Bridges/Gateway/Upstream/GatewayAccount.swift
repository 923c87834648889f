import Foundation
import GatewayClient
import GatewayWire
import Logging
import RelayCore
import RelayTransport

/// A backend that is an operator account on an OpenClaw gateway (a real one, or another relay):
/// the config kind `openclaw`. Each user turn becomes a `chat.send` (`GatewayAccountTurns`).
public final class GatewayAccount: Backend {
    public let name: String
    /// The account's turns, on the loop its link runs on.
    private let turns: LoopBound<GatewayAccountTurns>

    /// Loop thread (the link schedules timers and connects from there).
    public init(
        name: String,
        target: ServiceLoop.ClientTarget,
        sessionKey: String?,
        accountsDirectory: String,
        loop: ServiceLoop,
        logger: Logger,
        onState: @escaping (LinkState, String) -> Void
    ) throws {
        let identity = try AccountIdentity(directory: accountsDirectory, account: name)
        let link = GatewayLink(name: name, target: target, identity: identity, connector: loop, logger: logger, onState: onState)
        turns = LoopBound(GatewayAccountTurns(link: link, sessionKey: sessionKey), loop: loop)
        self.name = name
    }

    /// Opens the link; it heals itself from then on. Loop thread.
    public func connect() { turns.value.link.connect() }

    /// Closes the link for good (a reload removed or replaced the account). Loop thread.
    public func retire() { turns.value.link.stop() }

    /// A gateway runs `/compact` itself (OpenClaw's gateway command).
    public var canCompact: Bool { true }

    /// A conversation's upstream session is `relay:<user>:<conversation>`, so the fresh
    /// conversation has a fresh one; a fixed `session_key` is reset on the gateway (`sessions.reset`).
    public func reset(conversationID: String, reason: ResetReason) { turns.value.reset(reason: reason.rawValue) }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle {
        let (runID, turns, loop) = (Identifiers.newUUID(), self.turns, self.turns.loop)
        if loop.isOnLoop {
            turns.value.start(turn, runID: runID, events: events)
        } else {
            loop.execute { turns.value.start(turn, runID: runID, events: events) }
        }
        return TurnHandle { loop.execute { turns.value.cancel(runID) } }
    }
}
