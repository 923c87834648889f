import GatewayWire

/// Who may call what once connected: every method the relay answers, in the order
/// `hello-ok.features.methods` lists them, with the role or scope it needs. (`operator.admin`
/// passes every scope; checks that depend on the params, such as managing one's own device, are
/// the method's.)
extension GatewaySocketMachine {
    enum Access: Equatable {
        case anyone
        /// `operator.read` or `operator.write`.
        case read
        case write
        case pairing
        /// Nodes only, refused with this error.
        case nodes(GatewayError)
        /// An operator that reads chat (not a node; read or write).
        case chatReader
        /// A chat reader holding `operator.write`.
        case chatWriter
        /// What apps call first: not for nodes, and read or write.
        case apps
        /// An operator holding `operator.approvals` (or admin).
        case approvals
        /// An operator holding `operator.admin` (OpenClaw's admin-only methods: `chat.inject`).
        case admin
    }

    static let methods: [(name: String, access: Access)] = [
        ("connect", .anyone), ("health", .apps), ("status", .apps), ("models.list", .apps), ("system-presence", .apps),
        ("gateway.identity.get", .apps), ("last-heartbeat", .apps),
        ("device.pair.list", .pairing), ("device.pair.approve", .pairing), ("device.pair.reject", .pairing), ("device.pair.remove", .pairing),
        ("device.token.rotate", .pairing), ("device.token.revoke", .pairing),
        ("node.list", .read), ("node.describe", .anyone), ("node.invoke", .write), ("node.invoke.result", .nodes(.onlyNodesReportResults)),
        ("node.event", .nodes(.onlyNodesSendEvents)), ("node.pending.pull", .nodes(.onlyNodesHavePendingWork)),
        ("node.pending.drain", .nodes(.onlyNodesHavePendingWork)), ("node.pending.ack", .nodes(.onlyNodesHavePendingWork)),
        ("chat.send", .write), ("chat.history", .read), ("chat.abort", .write), ("sessions.list", .chatReader),
        ("gateway.discover", .anyone), ("device.pair", .anyone), ("device.unpair", .anyone),
        ("sessions.markRead", .chatReader), ("sessions.patch", .chatWriter), ("backends.list", .chatReader),
        ("exec.approval.get", .approvals), ("exec.approval.list", .approvals), ("exec.approval.resolve", .approvals),
        ("plugin.approval.list", .approvals), ("plugin.approval.resolve", .approvals),
        ("sessions.messages.subscribe", .chatReader), ("sessions.messages.unsubscribe", .chatReader),
        ("agent.wait", .chatReader), ("commands.list", .apps), ("chat.inject", .admin), ("agents.list", .apps), ("agent.identity.get", .apps),
        ("sessions.reset", .chatWriter), ("sessions.create", .chatWriter), ("sessions.delete", .chatWriter), ("sessions.compact", .chatWriter),
    ]

    static let access = Dictionary(uniqueKeysWithValues: methods.map { ($0.name, $0.access) })

    /// The contracts the relay honours (`hello-ok.features.capabilities`): only those it enforces.
    static let capabilities = ["chat-send-routing-contract"]

    /// Every event the relay sends (`hello-ok.features.events`).
    static let events = [
        "connect.challenge", "tick", "presence", "health", "shutdown", "device.pair.requested", "device.pair.resolved", "node.invoke.request", "chat",
        "sessions.changed", "agent", "exec.approval.requested", "exec.approval.resolved", "plugin.approval.requested", "plugin.approval.resolved",
        "session.message",
    ]

    /// Why the peer may not call a method needing `access`, or nil when it may.
    func refusal(of access: Access) -> GatewayError? {
        guard let peer else { return .connectFirst }
        let reads = peer.has("operator.read") || peer.has("operator.write")
        switch access {
        case .anyone: return nil
        case .read: return reads ? nil : .missingScope("operator.read")
        case .write: return peer.has("operator.write") ? nil : .missingScope("operator.write")
        case .pairing: return peer.has("operator.pairing") ? nil : .missingScope("operator.pairing")
        case .nodes(let refusal): return peer.isNode ? nil : refusal
        case .chatReader: return peer.readsChat ? nil : .missingScope("operator.read")
        case .chatWriter:
            guard peer.readsChat else { return .missingScope("operator.read") }
            return peer.has("operator.write") ? nil : .missingScope("operator.write")
        case .apps:
            guard !peer.isNode else { return .nodeRoleRefused }
            return reads ? nil : .missingScope("operator.read")
        case .approvals:
            guard !peer.isNode else { return .nodeRoleRefused }
            return peer.has("operator.approvals") ? nil : .missingScope("operator.approvals")
        case .admin:
            guard !peer.isNode else { return .nodeRoleRefused }
            return peer.has("operator.admin") ? nil : .missingScope("operator.admin")
        }
    }
}
