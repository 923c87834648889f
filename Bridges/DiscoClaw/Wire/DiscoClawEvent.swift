/// An event on the receive-only `/ws`: what the relay's downstream writes and what its upstream
/// account reads from a server, `{"type": …, …}`.
///
/// Read tolerantly: an answer event needs a non-empty `messageId` and its text (a `message.error`
/// without a reason gets one); anything else, unknown types included, is `.other`.
public enum DiscoClawEvent: Equatable, Sendable {
    /// A fragment of a running answer (the first one a socket gets: all of it so far).
    case messageDelta(MessageDelta)
    case messageComplete(MessageComplete)
    case messageError(MessageError)
    case toolStart(ToolStart)
    case toolEnd(ToolEnd)
    /// The client re-syncs the conversation.
    case conversationUpdated(ConversationUpdated)
    /// A type this model does not read, or a known one without its members.
    case other(type: String?)

    public struct MessageDelta: Codable, Equatable, Sendable {
        public var messageId: String
        public var conversationId: String
        public var delta: String
        public var seq: Int64?

        public init(messageId: String, conversationId: String, delta: String, seq: Int64?) {
            self.messageId = messageId
            self.conversationId = conversationId
            self.delta = delta
            self.seq = seq
        }
    }

    public struct MessageComplete: Codable, Equatable, Sendable {
        public var messageId: String
        public var conversationId: String
        public var content: String
        public var seq: Int64?

        public init(messageId: String, conversationId: String, content: String, seq: Int64?) {
            self.messageId = messageId
            self.conversationId = conversationId
            self.content = content
            self.seq = seq
        }
    }

    public struct MessageError: Codable, Equatable, Sendable {
        public var messageId: String
        public var conversationId: String
        public var error: String

        public init(messageId: String, conversationId: String, error: String) {
            self.messageId = messageId
            self.conversationId = conversationId
            self.error = error
        }
    }

    public struct ToolStart: Codable, Equatable, Sendable {
        public var messageId: String
        public var tool: String
        public var label: String

        public init(messageId: String, tool: String, label: String) {
            self.messageId = messageId
            self.tool = tool
            self.label = label
        }
    }

    /// A tool ended. `result` (the relay's addition; the native server sends none and the app reads
    /// only `messageId` and `tool`) is its output, at most 8 KiB, when the backend gave one.
    public struct ToolEnd: Codable, Equatable, Sendable {
        public var messageId: String
        public var tool: String
        public var result: String?

        public init(messageId: String, tool: String, result: String? = nil) {
            self.messageId = messageId
            self.tool = tool
            self.result = result
        }
    }

    public struct ConversationUpdated: Codable, Equatable, Sendable {
        public var conversationId: String

        public init(conversationId: String) { self.conversationId = conversationId }
    }

    public var type: String? {
        switch self {
        case .messageDelta: "message.delta"
        case .messageComplete: "message.complete"
        case .messageError: "message.error"
        case .toolStart: "tool.start"
        case .toolEnd: "tool.end"
        case .conversationUpdated: "conversation.updated"
        case .other(let type): type
        }
    }

    /// The event in a text frame; nil when it is not a JSON object.
    public static func decode(_ bytes: [UInt8]) -> DiscoClawEvent? { DiscoClawJSON.decode(DiscoClawEvent.self, from: bytes) }
}

extension DiscoClawEvent: Codable {
    private enum Keys: String, CodingKey {
        case type
        case messageId
        case conversationId
        case delta
        case content
        case error
        case seq
        case tool
        case label
        case result
    }

    public init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: Keys.self)
        let type = fields.string(.type)
        let id = fields.string(.messageId) ?? ""
        let conversationID = fields.string(.conversationId) ?? ""
        switch (type ?? "", fields.string(.delta), fields.string(.content), fields.string(.tool)) {
        case ("message.delta", let delta?, _, _) where !id.isEmpty:
            self = .messageDelta(MessageDelta(messageId: id, conversationId: conversationID, delta: delta, seq: fields.integer(.seq)))
        case ("message.complete", _, let content?, _) where !id.isEmpty:
            self = .messageComplete(MessageComplete(messageId: id, conversationId: conversationID, content: content, seq: fields.integer(.seq)))
        case ("message.error", _, _, _) where !id.isEmpty:
            let error = fields.string(.error) ?? "the server reported an error without a reason"
            self = .messageError(MessageError(messageId: id, conversationId: conversationID, error: error))
        case ("tool.start", _, _, let tool?) where !id.isEmpty:
            self = .toolStart(ToolStart(messageId: id, tool: tool, label: fields.string(.label) ?? tool))
        case ("tool.end", _, _, let tool?) where !id.isEmpty:
            self = .toolEnd(ToolEnd(messageId: id, tool: tool, result: fields.string(.result)))
        case ("conversation.updated", _, _, _) where !conversationID.isEmpty:
            self = .conversationUpdated(ConversationUpdated(conversationId: conversationID))
        default:
            self = .other(type: type)
        }
    }

    /// The payload's members and `type`, in one object.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .messageDelta(let payload): try payload.encode(to: encoder)
        case .messageComplete(let payload): try payload.encode(to: encoder)
        case .messageError(let payload): try payload.encode(to: encoder)
        case .toolStart(let payload): try payload.encode(to: encoder)
        case .toolEnd(let payload): try payload.encode(to: encoder)
        case .conversationUpdated(let payload): try payload.encode(to: encoder)
        case .other: break
        }
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(type, forKey: .type)
    }
}
