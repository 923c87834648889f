import Foundation

/// A node's identity in the cluster: its configured id and the incarnation of this start, the
/// token that fences its writes once it is declared dead.
public struct NodeIdentity: Sendable, Hashable, CustomStringConvertible {
    public var nodeID: String
    public var incarnation: UUID

    public init(nodeID: String, incarnation: UUID = UUID()) {
        self.nodeID = nodeID
        self.incarnation = incarnation
    }

    public var description: String { "\(nodeID)/\(incarnation.uuidString.lowercased())" }
}
