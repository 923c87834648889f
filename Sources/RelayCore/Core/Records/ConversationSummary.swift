/// A conversation as a list of conversations shows it: its newest event and how much of it the
/// user has read.
public struct ConversationSummary: Sendable, Equatable {
    public var conversation: Conversation
    /// The newest stored event (user message or answer), nil while there is none.
    public var lastEvent: ChatEvent?
    /// The user's read cursor (0: nothing read).
    public var lastReadSeq: Int64
    /// Assistant answers after the cursor. The user's own messages never count: sending one moves
    /// the sender's cursor to it.
    public var unreadCount: Int
    /// Every stored event of the conversation.
    public var messageCount: Int

    public init(conversation: Conversation, lastEvent: ChatEvent?, lastReadSeq: Int64, unreadCount: Int, messageCount: Int) {
        self.conversation = conversation
        self.lastEvent = lastEvent
        self.lastReadSeq = lastReadSeq
        self.unreadCount = unreadCount
        self.messageCount = messageCount
    }
}
