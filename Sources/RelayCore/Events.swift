/// Who wrote a chat event.
public enum ChatRole: String, Sendable, Codable {
    case user
    case assistant
}

/// A finalized, persisted event in a user's history, in per-user `seq` order.
public struct ChatEvent: Sendable, Equatable {
    public var id: String
    public var seq: Int64
    public var userID: String
    public var conversationID: String
    public var role: ChatRole
    public var content: String
    public var timestampMillis: Int64
    /// The device that sent it (user messages only).
    public var deviceID: String?
    /// Attachments as a JSON array in the relay's neutral form, or nil.
    public var attachmentsJSON: String?

    public init(
        id: String, seq: Int64, userID: String, conversationID: String, role: ChatRole, content: String, timestampMillis: Int64,
        deviceID: String?, attachmentsJSON: String?
    ) {
        self.id = id
        self.seq = seq
        self.userID = userID
        self.conversationID = conversationID
        self.role = role
        self.content = content
        self.timestampMillis = timestampMillis
        self.deviceID = deviceID
        self.attachmentsJSON = attachmentsJSON
    }
}

/// Everything the bus fans out to the devices of a user.
public enum BusEvent: Sendable, Equatable {
    /// A persisted event (user echo or assistant final).
    case message(ChatEvent)
    /// The full assistant text so far for an event id that is not final yet.
    case streaming(eventID: String, conversationID: String, content: String, timestampMillis: Int64)
    /// The assistant typing indicator for a conversation.
    case assistantTyping(conversationID: String, active: Bool)
}
