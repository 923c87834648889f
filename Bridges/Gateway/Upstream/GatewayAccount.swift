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
        turns.startTurn(turn, events: events)
    }
}

extension GatewayAccount {
    /// A turn's images as an upstream gateway's `chat.send` takes them (`ChatAttachments`; other
    /// kinds are not sent: OpenClaw's composer attaches images only). Their bytes are inline by
    /// now (`startTurn` read uploads off the loop).
    static func attachments(of turn: TurnRequest) -> [JSONValue] {
        turn.attachments.compactMap { attachment in
            guard ChatAttachments.imageTypes.contains(attachment.mimeType), let data = attachment.base64,
                data.utf8.count <= ChatAttachments.maxImageBytes / 3 * 4 + 4
            else { return nil }
            var fields: [String: JSONValue] = ["type": .string("image"), "mimeType": .string(attachment.mimeType), "content": .string(data)]
            if let name = attachment.fileName { fields["fileName"] = .string(name) }
            return .object(fields)
        }
    }
}
