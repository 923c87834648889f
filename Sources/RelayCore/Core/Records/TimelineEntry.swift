/// One row of a user's timeline as clients that sync by seq see it: a stored event, the
/// placeholder of an answer still running, or an answer that failed.
public struct TimelineEntry: Sendable, Equatable {
    public enum Status: String, Sendable {
        case pending, streaming, complete, error
    }

    public var id: String
    /// The sender's id for a user message.
    public var clientID: String?
    public var conversationID: String
    public var role: ChatRole
    public var content: String
    public var status: Status
    public var error: String?
    public var seq: Int64
    public var createdAt: Int64
    public var completedAt: Int64?

    public init(
        id: String,
        clientID: String? = nil,
        conversationID: String,
        role: ChatRole,
        content: String,
        status: Status,
        error: String? = nil,
        seq: Int64,
        createdAt: Int64,
        completedAt: Int64? = nil
    ) {
        self.id = id
        self.clientID = clientID
        self.conversationID = conversationID
        self.role = role
        self.content = content
        self.status = status
        self.error = error
        self.seq = seq
        self.createdAt = createdAt
        self.completedAt = completedAt
    }
}
