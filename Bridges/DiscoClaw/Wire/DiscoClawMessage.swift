import Foundation
import RelayKit

/// A message row: in `GET /conversations/:id/messages` and `/sync`.
///
/// Roles are `user`/`assistant`, statuses `pending`/`streaming`/`complete`/`error`; every `*At` is
/// Unix milliseconds. A server's row decodes when it has an `id` and a `status` (what an upstream
/// account reads is those, `content`, `error` and `seq`).
public struct DiscoClawMessage: Codable, Equatable, Sendable {
    public var id: String
    public var clientId: String?
    public var conversationId: String
    public var role: String
    public var content: String
    public var status: String
    public var error: String?
    public var seq: Int64?
    public var createdAt: Int64
    public var completedAt: Int64?

    public init(
        id: String,
        clientId: String? = nil,
        conversationId: String,
        role: String,
        content: String,
        status: String,
        error: String? = nil,
        seq: Int64?,
        createdAt: Int64,
        completedAt: Int64? = nil
    ) {
        self.id = id
        self.clientId = clientId
        self.conversationId = conversationId
        self.role = role
        self.content = content
        self.status = status
        self.error = error
        self.seq = seq
        self.createdAt = createdAt
        self.completedAt = completedAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let id = container.string(.id), let status = container.string(.status) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "a message without id or status"))
        }
        self.init(
            id: id,
            clientId: container.string(.clientId),
            conversationId: container.string(.conversationId) ?? "",
            role: container.string(.role) ?? "",
            content: container.string(.content) ?? "",
            status: status,
            error: container.string(.error),
            seq: container.integer(.seq),
            createdAt: container.integer(.createdAt) ?? 0,
            completedAt: container.integer(.completedAt)
        )
    }
}

/// `GET /conversations/:id/messages?limit=&before=`: the newest `limit` before `before`, oldest first.
public struct DiscoClawMessagePage: Codable, Equatable, Sendable {
    public var messages: [DiscoClawMessage]
    public var hasMore: Bool

    public init(messages: [DiscoClawMessage], hasMore: Bool) {
        self.messages = messages
        self.hasMore = hasMore
    }
}

/// `GET /sync?since=`: conversations changed and messages stored after `since`, and where to go on from.
///
/// A server's page keeps the message rows that decode and ignores its conversations when they do not.
public struct DiscoClawSyncPage: Codable, Equatable, Sendable {
    public var conversations: [DiscoClawConversation]
    public var messages: [DiscoClawMessage]
    public var cursor: Int64?

    public init(conversations: [DiscoClawConversation], messages: [DiscoClawMessage], cursor: Int64?) {
        self.conversations = conversations
        self.messages = messages
        self.cursor = cursor
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let messages = container.tolerantArray(of: DiscoClawMessage.self, .messages) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "a sync page without messages"))
        }
        self.init(
            conversations: container.tolerantArray(of: DiscoClawConversation.self, .conversations) ?? [],
            messages: messages,
            cursor: container.integer(.cursor)
        )
    }
}

/// `POST /conversations/:id/messages {content, clientId?}`.
public struct DiscoClawMessageRequest: Encodable, Equatable, Sendable {
    /// Client ids longer than this are refused (the app sends an uppercase UUID).
    public static let maxClientIDBytes = 128

    /// As sent; the relay stores it trimmed.
    public var content: String
    public var clientId: String?

    public init(content: String, clientId: String?) {
        self.content = content
        self.clientId = clientId
    }

    /// `content` must hold more than white space; `clientId`, when not null, 1 to 128 bytes of string.
    public init(json object: [String: JSONValue]) throws(DiscoClawError) {
        guard let content = object["content"]?.stringValue, !Self.isBlank(content) else { throw .contentRequired }
        if let given = object["clientId"], given.stringValue == nil, !given.isNull { throw .clientIDNotString }
        let clientID = object["clientId"]?.stringValue
        guard (clientID?.utf8.count ?? 0) <= Self.maxClientIDBytes, clientID?.isEmpty != true else {
            throw .clientIDLength(maxBytes: Self.maxClientIDBytes)
        }
        self.init(content: content, clientId: clientID)
    }

    /// Only white space (stops at the first other character: a large message is not copied).
    static func isBlank(_ text: String) -> Bool {
        !text.unicodeScalars.contains { !CharacterSet.whitespacesAndNewlines.contains($0) }
    }
}

/// The `201` of `POST /conversations/:id/messages`: the stored message and the answer's id.
/// `clientId` and `assistantMessageId` are always written (`null` when there is none). A server's
/// reply decodes when it names a non-empty `assistantMessageId`.
public struct DiscoClawPosted: Codable, Equatable, Sendable {
    public var id: String
    public var seq: Int64?
    public var clientId: String?
    /// Always `complete`: the message is stored.
    public var status: String
    public var assistantMessageId: String?

    private enum CodingKeys: String, CodingKey {
        case id
        case seq
        case clientId
        case status
        case assistantMessageId
    }

    public init(id: String, seq: Int64?, clientId: String?, status: String = "complete", assistantMessageId: String?) {
        self.id = id
        self.seq = seq
        self.clientId = clientId
        self.status = status
        self.assistantMessageId = assistantMessageId
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let answerID = container.string(.assistantMessageId), !answerID.isEmpty else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "no assistantMessageId"))
        }
        self.init(
            id: container.string(.id) ?? "",
            seq: container.integer(.seq),
            clientId: container.string(.clientId),
            status: container.string(.status) ?? "",
            assistantMessageId: answerID
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(seq, forKey: .seq)
        try container.encode(clientId, forKey: .clientId)
        try container.encode(status, forKey: .status)
        try container.encode(assistantMessageId, forKey: .assistantMessageId)
    }
}
