import RelayKit

/// A conversation: the `201` of `POST /conversations`, `GET` and `PATCH /conversations/:id`, the
/// items of `GET /conversations` (with `lastMessage`) and of `/sync`.
///
/// `title` is always written (`null` when untitled); `claudeSessionId` only in `GET /conversations/:id`
/// (`.some(nil)` writes `null`). A server's conversation decodes when it has a non-empty `id`.
public struct DiscoClawConversation: Codable, Equatable, Sendable {
    public struct LastMessage: Codable, Equatable, Sendable {
        public var role: String
        public var content: String
        public var createdAt: Int64

        public init(role: String, content: String, createdAt: Int64) {
            self.role = role
            self.content = content
            self.createdAt = createdAt
        }
    }

    public var id: String
    public var title: String?
    public var createdAt: Int64
    public var updatedAt: Int64
    public var isProtected: Bool
    public var archivedAt: Int64?
    /// The relay's `[[backends]]` entry the conversation is bound to (a relay extension).
    public var backend: String?
    public var lastMessage: LastMessage?
    public var claudeSessionId: String??

    private enum CodingKeys: String, CodingKey {
        case id
        case title
        case createdAt
        case updatedAt
        case isProtected
        case archivedAt
        case backend
        case lastMessage
        case claudeSessionId
    }

    public init(
        id: String,
        title: String?,
        createdAt: Int64,
        updatedAt: Int64,
        isProtected: Bool = false,
        archivedAt: Int64? = nil,
        backend: String? = nil,
        lastMessage: LastMessage? = nil,
        claudeSessionId: String?? = nil
    ) {
        self.id = id
        self.title = title
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.isProtected = isProtected
        self.archivedAt = archivedAt
        self.backend = backend
        self.lastMessage = lastMessage
        self.claudeSessionId = claudeSessionId
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let id = container.string(.id), !id.isEmpty else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "a conversation without an id"))
        }
        self.init(
            id: id,
            title: container.string(.title),
            createdAt: container.integer(.createdAt) ?? 0,
            updatedAt: container.integer(.updatedAt) ?? 0,
            isProtected: container.boolean(.isProtected) ?? false,
            archivedAt: container.integer(.archivedAt),
            backend: container.string(.backend),
            lastMessage: try? container.decodeIfPresent(LastMessage.self, forKey: .lastMessage)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(isProtected, forKey: .isProtected)
        try container.encodeIfPresent(archivedAt, forKey: .archivedAt)
        try container.encodeIfPresent(backend, forKey: .backend)
        try container.encodeIfPresent(lastMessage, forKey: .lastMessage)
        if let claudeSessionId { try container.encode(claudeSessionId, forKey: .claudeSessionId) }
    }
}

/// `POST /conversations {title?, backend?}`. Read leniently: a member that is not a string is absent.
public struct DiscoClawConversationRequest: Encodable, Equatable, Sendable {
    public var title: String?
    public var backend: String?

    public init(title: String?, backend: String? = nil) {
        self.title = title
        self.backend = backend
    }

    public init(json object: [String: JSONValue]) {
        title = object["title"]?.stringValue
        backend = object["backend"]?.stringValue
    }
}

/// `PATCH /conversations/:id {title?, archived?, backend?}`: only what the body names changes;
/// `title: null` clears the title (`.some(nil)`).
public struct DiscoClawConversationPatch: Encodable, Equatable, Sendable {
    public var title: String??
    public var archived: Bool?
    /// Read leniently: not a string is absent.
    public var backend: String?

    public init(title: String?? = nil, archived: Bool? = nil, backend: String? = nil) {
        self.title = title
        self.archived = archived
        self.backend = backend
    }

    public init(json object: [String: JSONValue]) throws(DiscoClawError) {
        if let title = object["title"], title.stringValue == nil, !title.isNull { throw .titleNotString }
        if let archived = object["archived"], archived.boolValue == nil { throw .archivedNotBoolean }
        self.init(title: object["title"].map(\.stringValue), archived: object["archived"]?.boolValue, backend: object["backend"]?.stringValue)
    }
}
