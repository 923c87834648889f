import RelayKit

/// What every session method's params share: a non-empty `key`, and no property it does not take.
public enum SessionParams {
    /// The longest session key taken, in UTF-8 bytes (OpenClaw's keys are `agent:<id>:<name>`).
    public static let maxKeyBytes = 1024

    /// The key, or why the params are refused (`taking`: every property the method takes).
    public static func key(in fields: [String: JSONValue], taking properties: Set<String>) -> Result<String, GatewayError> {
        guard let key = fields["key"]?.stringValue, !key.isEmpty else { return .failure(.keyRequired) }
        guard key.utf8.count <= maxKeyBytes else { return .failure(.patchValueTooLong("key", maxBytes: maxKeyBytes)) }
        if let other = fields.keys.sorted().first(where: { !properties.contains($0) }) { return .failure(.unsupportedProperty(other)) }
        return .success(key)
    }
}

/// `sessions.reset {key, reason?: "new" | "reset", agentId?}` → `{ok, key, entry}` (OpenClaw's
/// `SessionsResetParamsSchema`; a fresh session for the key, the old one archived).
public struct SessionsResetParams: Equatable, Sendable {
    public var key: String
    /// `new` or `reset` (the default).
    public var reason: String
    /// The session id the caller saw: a session reset or replaced since is refused.
    public var expectedSessionId: String?

    public init(key: String, reason: String = "reset") {
        self.key = key
        self.reason = reason
    }

    public static func parse(_ fields: [String: JSONValue]) -> Result<SessionsResetParams, GatewayError> {
        let key: String
        switch SessionParams.key(in: fields, taking: ["key", "agentId", "reason", "expectedSessionId"]) {
        case .success(let found): key = found
        case .failure(let error): return .failure(error)
        }
        var params = SessionsResetParams(key: key)
        params.expectedSessionId = fields["expectedSessionId"]?.stringValue
        switch fields["reason"] {
        case nil, .null?: return .success(params)
        case .string(let reason)? where reason == "new" || reason == "reset":
            params.reason = reason
            return .success(params)
        default: return .failure(.invalid("reason must be \"new\" or \"reset\""))
        }
    }
}

/// `sessions.reset`'s and `sessions.create`'s answer: the session's key and row (`sessionId` is
/// its new conversation id).
public struct SessionsEntryResult: Codable, Equatable, Sendable {
    public var ok = true
    public var key: String
    public var sessionId: String?
    public var entry: SessionEntry

    public init(key: String, entry: SessionEntry) {
        self.key = key
        sessionId = entry.sessionId
        self.entry = entry
    }
}

/// `sessions.delete {key, deleteTranscript?, agentId?}` → `{ok, key, deleted, archived}`.
/// `deleteTranscript` defaults to true, as OpenClaw's handler has it.
public struct SessionsDeleteParams: Equatable, Sendable {
    public var key: String
    public var deleteTranscript: Bool
    /// The session id the caller saw: a session reset or replaced since is refused.
    public var expectedSessionId: String?
    /// Only an archived session may go (OpenClaw's archive-then-delete).
    public var archivedOnly = false

    public init(key: String, deleteTranscript: Bool = true) {
        self.key = key
        self.deleteTranscript = deleteTranscript
    }

    /// What OpenClaw's schema has besides: its lifecycle guards and hooks, taken and not used.
    static let ignored: Set<String> = ["agentId", "emitLifecycleHooks", "expectedLifecycleRevision", "expectedSessionUpdatedAt"]

    public static func parse(_ fields: [String: JSONValue]) -> Result<SessionsDeleteParams, GatewayError> {
        let key: String
        switch SessionParams.key(in: fields, taking: ignored.union(["key", "deleteTranscript", "expectedSessionId", "archivedOnly"])) {
        case .success(let found): key = found
        case .failure(let error): return .failure(error)
        }
        var params = SessionsDeleteParams(key: key)
        params.expectedSessionId = fields["expectedSessionId"]?.stringValue
        for (name, value) in [("deleteTranscript", fields["deleteTranscript"]), ("archivedOnly", fields["archivedOnly"])] {
            switch value {
            case nil: continue
            case .bool(let flag)?: if name == "archivedOnly" { params.archivedOnly = flag } else { params.deleteTranscript = flag }
            default: return .failure(.patchNotBool(name))
            }
        }
        return .success(params)
    }
}

public struct SessionsDeleteResult: Codable, Equatable, Sendable {
    public var ok = true
    public var key: String
    public var deleted: Bool
    /// What was kept instead of deleted: the `cv:` key of a conversation whose transcript stays.
    public var archived: [String]

    public init(key: String, deleted: Bool, archived: [String]) {
        self.key = key
        self.deleted = deleted
        self.archived = archived
    }
}

/// `sessions.compact {key, maxLines?, agentId?}` → `{ok, key, compacted, reason?}`.
public struct SessionsCompactResult: Codable, Equatable, Sendable {
    public var ok = true
    public var key: String
    public var compacted: Bool
    public var reason: String?

    public init(key: String, compacted: Bool, reason: String? = nil) {
        self.key = key
        self.compacted = compacted
        self.reason = reason
    }
}
