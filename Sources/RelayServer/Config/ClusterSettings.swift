/// `[cluster]`: this relay is one node of several on one PostgreSQL (`[store] kind = "postgres"`,
/// issue 29, docs/cluster.md). Each node has its own data directory and listeners; the database
/// holds what they share.
public struct ClusterSettings: Sendable, Equatable {
    /// This node's name, unique in the cluster; nil = this host's name and the data directory.
    public var nodeID: String?
    /// How often the node renews its lease and looks for dead nodes.
    public var heartbeatSeconds = 2
    /// How long a node that stopped renewing (frozen, cut off) stays alive to the others.
    public var leaseSeconds = 10

    public init() {}

    public static let maxNodeIDLength = 200
}

extension ClusterSettings: CustomStringConvertible {
    public var description: String {
        "node \(nodeID ?? "(host:data dir)"), heartbeat \(heartbeatSeconds) s, lease \(leaseSeconds) s"
    }
}
