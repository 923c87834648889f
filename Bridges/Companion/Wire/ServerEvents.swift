import RelayKit

// The `data` of the events a session's output becomes, broadcast (`requestId: null`) to every
// socket holding the session. The app's names and required fields (companion.md, "Decoding").

/// One piece of a turn's output: `{sessionId, isFinal, chunk {id, type, content, isFinal, metadata?}}`.
public struct StreamChunk: CompanionPayload, Equatable {
    public static let type = "streamChunk"

    public struct Chunk: Encodable, Sendable, Equatable {
        /// `chunk-N`, from 0 in every turn.
        public var id: String
        /// `text` (a whole paragraph), `tool_use`, `complete` (empty, the last one), ...
        public var type: String
        public var content: String
        public var isFinal: Bool
        public var metadata: Metadata?

        public init(id: String, type: String, content: String, isFinal: Bool, metadata: Metadata? = nil) {
            self.id = id
            self.type = type
            self.content = content
            self.isFinal = isFinal
            self.metadata = metadata
        }
    }

    /// Where the app reads a tool chunk's name.
    public struct Metadata: Encodable, Sendable, Equatable {
        public var toolName: String
        public var toolId: String

        public init(toolName: String, toolId: String) {
            self.toolName = toolName
            self.toolId = toolId
        }
    }

    public var sessionId: String
    public var isFinal: Bool
    public var chunk: Chunk

    public init(sessionId: String, chunk: Chunk) {
        self.sessionId = sessionId
        self.isFinal = chunk.isFinal
        self.chunk = chunk
    }

    /// Nil without a `sessionId` or a `chunk`; the chunk's missing fields read as empty.
    public init?(_ data: CompanionFields) {
        guard let sessionId = data.string("sessionId"), let chunk = data["chunk"] else { return nil }
        let fields = CompanionFields(chunk) ?? CompanionFields()
        let isFinal = fields.bool("isFinal") ?? false
        self.init(
            sessionId: sessionId,
            chunk: Chunk(id: fields.string("id") ?? "", type: fields.string("type") ?? "", content: fields.string("content") ?? "", isFinal: isFinal)
        )
    }
}

/// A turn's answer as a message: its content as an array of blocks. The relay's notes go as
/// `type: "relay_note"` (the app logs assistant messages and shows none).
public struct AssistantMessage: CompanionPayload, Equatable {
    public static let type = "assistantMessage"

    public struct Block: Encodable, Sendable, Equatable {
        public var type = "text"
        public var text: String
    }

    public var type: String
    public var messageId: String
    public var sessionId: String
    public var content: [Block]
    public var timestamp: String

    public init(messageId: String, sessionId: String, text: String, timestamp: String, type: String = "assistant_response") {
        self.type = type
        self.messageId = messageId
        self.sessionId = sessionId
        self.content = [Block(text: text)]
        self.timestamp = timestamp
    }
}

/// How a turn ended: its result and duration on success, neither on failure.
public struct ConversationResult: CompanionPayload, Equatable {
    public static let type = "conversationResult"
    public var type = "final_result"
    public var success: Bool
    public var result: String?
    public var sessionId: String
    public var duration: Double?
    public var timestamp: String

    public init(success: Bool, result: String?, sessionId: String, duration: Double?, timestamp: String) {
        self.success = success
        self.result = result
        self.sessionId = sessionId
        self.duration = duration
        self.timestamp = timestamp
    }
}

/// A user message another device sent in the session (a relay extension the app ignores).
public struct UserMessageEvent: CompanionPayload, Equatable {
    public static let type = "userMessage"
    public var sessionId: String
    public var messageId: String
    public var content: String
    @AlwaysPresent public var deviceId: String?
    public var timestamp: String

    public init(sessionId: String, messageId: String, content: String, deviceId: String?, timestamp: String) {
        self.sessionId = sessionId
        self.messageId = messageId
        self.content = content
        self.deviceId = deviceId
        self.timestamp = timestamp
    }
}

/// A tool a running turn started.
public struct ToolUse: CompanionPayload, Equatable {
    public static let type = "toolUse"
    public var type = "tool_use"
    public var sessionId: String
    public var toolName: String
    /// Always an object.
    public var toolInput: JSONValue
    public var toolId: String
    public var timestamp: String

    public init(sessionId: String, toolName: String, toolInput: JSONValue, toolId: String, timestamp: String) {
        self.sessionId = sessionId
        self.toolName = toolName
        self.toolInput = toolInput
        self.toolId = toolId
        self.timestamp = timestamp
    }
}

/// A tool of a running turn ended, with what it returned. The app's validator drops a
/// `toolResult` with neither `result` nor `error`, so `result` is always written.
public struct ToolResult: CompanionPayload, Equatable {
    public static let type = "toolResult"
    public var type = "tool_result"
    public var sessionId: String
    public var toolName: String
    public var toolId: String
    /// The tool's output (bounded by the core), empty when the backend gave none.
    public var result: String
    public var success: Bool
    /// Why it failed (its output, when it has one); absent on success.
    public var error: String?
    public var timestamp: String

    public init(sessionId: String, toolName: String, toolId: String, result: String, success: Bool, error: String? = nil, timestamp: String) {
        self.sessionId = sessionId
        self.toolName = toolName
        self.toolId = toolId
        self.result = result
        self.success = success
        self.error = error
        self.timestamp = timestamp
    }
}
