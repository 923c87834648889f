import RelayKit

/// One conversation as `sessions.list`, `sessions.changed` and `sessions.patch` show it: the
/// fields of OpenClaw's session row the relay has (`label`, `category`, `pinned`, `archived`,
/// `unread`, `thinkingLevel`, `fastMode`, `verboseLevel`, `modelProvider`/`model`: the backend's
/// kind and name, as `models.list` lists them) and the relay's own (`backend`, unread counts,
/// seqs, a preview). The relay writes every field (`null` where it has no value); a real
/// gateway's entries have `key` and some of the rest, so a client reads them as optional.
public struct SessionEntry: Codable, Equatable, Sendable {
    public var key: String
    public var sessionId: String?
    public var kind: String?
    public var displayName: String?
    @ExplicitNull public var label: String?
    public var backend: String?
    @ExplicitNull public var backendKind: String?
    public var updatedAt: Int64?
    @ExplicitNull public var lastMessagePreview: String?
    @ExplicitNull public var lastMessageRole: String?
    public var lastSeq: Int64?
    public var lastReadSeq: Int64?
    public var unreadCount: Int64?
    public var messageCount: Int64?
    public var archived: Bool?
    @ExplicitNull public var archivedAt: Int64?
    public var pinned: Bool?
    @ExplicitNull public var pinnedAt: Int64?
    /// Marked unread, or answers wait after the read cursor.
    public var unread: Bool?
    @ExplicitNull public var category: String?
    @ExplicitNull public var thinkingLevel: String?
    /// `true`, `false` or `"auto"`, as OpenClaw writes it.
    @ExplicitNull public var fastMode: JSONValue?
    @ExplicitNull public var verboseLevel: String?
    @ExplicitNull public var modelProvider: String?
    @ExplicitNull public var model: String?

    public init(key: String) { self.key = key }
}

/// The `sessions.changed` event, in OpenClaw's shape: which session, why (`create`, `patch`,
/// `send`, `read`, `new`, `reset`, `compact`, `delete`), and its whole row (none for `delete`).
public struct SessionsChanged: Codable, Equatable, Sendable {
    public var sessionKey: String
    public var reason: String
    public var ts: Int64
    public var session: SessionEntry?
    /// Set for `compact`: whether the backend compacted.
    public var compacted: Bool?

    public init(sessionKey: String, reason: String, ts: Int64, session: SessionEntry?, compacted: Bool? = nil) {
        self.sessionKey = sessionKey
        self.reason = reason
        self.ts = ts
        self.session = session
        self.compacted = compacted
    }
}

/// `sessions.list {limit?}` → `{ts, count, sessions, truncated}`.
public struct SessionsListParams: Codable, Equatable, Sendable {
    public var limit: Int64?

    public init(limit: Int64? = nil) { self.limit = limit }
}

public struct SessionsList: Codable, Equatable, Sendable {
    public var ts: Int64
    public var count: Int64
    public var sessions: [SessionEntry]
    public var truncated: Bool?

    public init(ts: Int64, sessions: [SessionEntry], truncated: Bool) {
        self.ts = ts
        count = Int64(sessions.count)
        self.sessions = sessions
        self.truncated = truncated
    }
}

/// `sessions.markRead {key, seq}` (`sessionKey` is taken for `key`) → `{key, lastReadSeq, unreadCount}`.
public struct MarkReadParams: Codable, Equatable, Sendable {
    public var key: String?
    public var sessionKey: String?
    public var seq: Int64?

    public init(key: String, seq: Int64) {
        self.key = key
        self.seq = seq
    }
}

public struct MarkReadResult: Codable, Equatable, Sendable {
    public var key: String
    public var lastReadSeq: Int64
    public var unreadCount: Int64

    public init(key: String, lastReadSeq: Int64, unreadCount: Int64) {
        self.key = key
        self.lastReadSeq = lastReadSeq
        self.unreadCount = unreadCount
    }
}

/// `backends.list` → `{backends:[{name, kind, state}], default}`: `state` is an upstream
/// account's link state or `ready` for a built-in backend.
public struct BackendsList: Codable, Equatable, Sendable {
    public struct Backend: Codable, Equatable, Sendable {
        public var name: String
        public var kind: String?
        public var state: String?

        public init(name: String, kind: String, state: String) {
            self.name = name
            self.kind = kind
            self.state = state
        }
    }

    public var backends: [Backend]
    public var `default`: String?

    public init(backends: [Backend], default fallback: String) {
        self.backends = backends
        self.default = fallback
    }
}
