import DiscoClawWire

/// Short forms of the answer events a server sends, as the upstream decodes them (no conversation id given).
extension DiscoClawEvent {
    static func delta(_ id: String, _ text: String, seq: Int64? = nil, conversation: String = "") -> DiscoClawEvent {
        .messageDelta(MessageDelta(messageId: id, conversationId: conversation, delta: text, seq: seq))
    }

    static func complete(_ id: String, _ content: String, seq: Int64? = nil, conversation: String = "") -> DiscoClawEvent {
        .messageComplete(MessageComplete(messageId: id, conversationId: conversation, content: content, seq: seq))
    }

    static func error(_ id: String, _ reason: String, conversation: String = "") -> DiscoClawEvent {
        .messageError(MessageError(messageId: id, conversationId: conversation, error: reason))
    }
}

extension DiscoClawMessage {
    /// A `/sync` row with what the upstream reads.
    static func row(_ id: String, _ status: String, content: String = "", error: String? = nil, seq: Int64?) -> DiscoClawMessage {
        DiscoClawMessage(id: id, conversationId: "", role: "", content: content, status: status, error: error, seq: seq, createdAt: 0)
    }
}
