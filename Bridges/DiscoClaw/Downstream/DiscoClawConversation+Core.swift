import DiscoClawWire
import RelayCore

extension DiscoClawConversation {
    /// The core's conversation as the app reads it (an archived one without its own time is
    /// archived at its last change).
    init(_ conversation: Conversation, lastMessage: ChatEvent? = nil) {
        self.init(
            id: conversation.id,
            title: conversation.title,
            createdAt: conversation.createdAt,
            updatedAt: conversation.updatedAt,
            archivedAt: conversation.archivedAt ?? (conversation.archived ? conversation.updatedAt : nil),
            backend: conversation.backend,
            lastMessage: lastMessage.map { LastMessage(role: $0.role.rawValue, content: $0.content, createdAt: $0.timestampMillis) }
        )
    }
}
