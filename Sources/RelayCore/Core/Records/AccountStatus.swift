/// The last reported state of an upstream account, for `clawrelay accounts`.
public struct AccountStatus: Sendable, Equatable {
    public var name: String
    public var kind: String
    public var state: String
    public var detail: String
    public var updatedAt: Int64

    public init(name: String, kind: String, state: String, detail: String, updatedAt: Int64) {
        self.name = name
        self.kind = kind
        self.state = state
        self.detail = detail
        self.updatedAt = updatedAt
    }
}
