import ClawlineBridge
import CompanionBridge
import DiscoClawBridge
import GatewayBridge
import RelayCore

extension RelayConfig {
    /// The configured listener a stored conversation belongs to, as its keys tell (a DiscoClaw
    /// conversation, a Companion session, the Clawline timeline or admin channel, a gateway
    /// session), with the turn policy it runs that conversation's turns under; nil when no
    /// configured listener owns it. With `Router.backendName(for:policy:)` it names the backend of
    /// the conversation's next turn from that listener, as the turn runner picks it.
    public func owner(of conversation: Conversation) -> (listener: String, policy: TurnPolicy)? {
        if let policy = discoClaw?.turnPolicy(for: conversation) { return ("discoclaw", policy) }
        if let policy = companion?.turnPolicy(for: conversation) { return ("companion", policy) }
        if let policy = clawline?.turnPolicy(for: conversation) { return ("clawline", policy) }
        if let policy = gateway?.turnPolicy(for: conversation) { return ("gateway", policy) }
        return nil
    }

    /// A router over the configured backends' names (no backend is built), for tools that read a
    /// data directory and say which backend answers what.
    public var namesRouter: Router { Router(backends: [], defaultBackend: backends.first?.name) }
}
