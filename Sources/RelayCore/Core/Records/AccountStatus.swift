/// The last reported state of an upstream account, for `clawrelay accounts`.
public struct AccountStatus: Sendable, Equatable {
    public var name: String
    public var kind: String
    public var state: String
    public var detail: String
    public var updatedAt: Int64
    /// In a cluster: the node id holding the account's lease (nil: none live, or a relay on its own).
    public var node: String?

    public init(name: String, kind: String, state: String, detail: String, updatedAt: Int64, node: String? = nil) {
        self.node = node
        self.name = name
        self.kind = kind
        self.state = state
        self.detail = detail
        self.updatedAt = updatedAt
    }
}
