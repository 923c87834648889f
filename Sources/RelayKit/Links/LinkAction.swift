/// What a link machine asks its driver to do, in order. The lifecycle's actions are the same for
/// every protocol; `own` carries the protocol's (store a pairing, hand a frame to the turns, …),
/// which the driver passes to the link's owner.
public enum LinkAction<Own: Equatable>: Equatable {
    /// Open the socket; the driver answers with `opened` or `closed`.
    case connect
    case send(String)
    /// A WebSocket ping (the watchdog hears the pong as the connection's pong age).
    case ping
    case close(code: UInt16, reason: String)
    /// Run `tick` after this long (replaces the pending tick).
    case armTick(afterMillis: Int)
    case cancelTick
    /// Run `connect` after this long.
    case armRetry(afterMillis: Int)
    /// The link's state and an operator-readable detail (`clawrelay accounts`); never a secret.
    case report(LinkState, String)
    /// The protocol's own action, for the link's owner.
    case own(Own)
}

extension LinkAction: Sendable where Own: Sendable {}
