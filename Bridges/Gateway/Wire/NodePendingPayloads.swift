import RelayKit

/// `node.pending.pull {}`'s answer (OpenClaw's `nodePendingHandlers`): the actions queued for the
/// node. The relay queues none, so a woken node finds an empty queue rather than an unknown method.
public struct NodePendingActions: Codable, Equatable, Sendable {
    public var nodeId: String
    public var actions: [JSONValue] = []

    public init(nodeId: String) { self.nodeId = nodeId }
}

/// `node.pending.drain {maxItems? 1…10}`'s answer (`NodePendingDrainResultSchema`).
public struct NodePendingDrain: Codable, Equatable, Sendable {
    public var nodeId: String
    public var revision: Int64 = 0
    public var items: [JSONValue] = []
    public var hasMore = false

    public init(nodeId: String) { self.nodeId = nodeId }
}

/// `node.pending.ack {ids}` (`NodePendingAckParamsSchema`: at least one non-empty id).
public struct NodePendingAckParams: Codable, Equatable, Sendable {
    public var ids: [String]?

    public init(ids: [String]) { self.ids = ids }
}

/// `node.pending.ack`'s answer: the ids acknowledged (trimmed, each once) and what is left.
public struct NodePendingAck: Codable, Equatable, Sendable {
    public var nodeId: String
    public var ackedIds: [String]
    public var remainingCount: Int64 = 0

    public init(nodeId: String, ackedIds: [String]) {
        self.nodeId = nodeId
        self.ackedIds = ackedIds
    }
}
