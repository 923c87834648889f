import RelayKit

/// `sessions.patch {key, label?, model?, thinkingLevel?, fastMode?, verboseLevel?, pinned?,
/// archived?, unread?, category?}` as OpenClaw's `SessionsPatchParamsSchema` has them: an absent
/// property is left alone, `null` clears a nullable one. `agentId` is taken and ignored (the relay
/// is one agent); any other property is refused rather than silently dropped.
public struct SessionPatch: Equatable, Sendable {
    /// What a nullable property becomes.
    public enum Change<Value: Equatable & Sendable>: Equatable, Sendable {
        case set(Value)
        case clear
    }

    public enum FastMode: String, Equatable, Sendable {
        case on, off, auto
    }

    public var key: String
    public var label: Change<String>?
    /// A backend's name, bare or `"<kind>/<name>"` as a picker builds it from `models.list`.
    public var model: Change<String>?
    /// The client's word for a level (the core knows the names and their synonyms).
    public var thinkingLevel: Change<String>?
    public var fastMode: Change<FastMode>?
    public var verboseLevel: Change<String>?
    public var category: Change<String>?
    public var pinned: Bool?
    public var archived: Bool?
    /// `false` marks the session read; `true` marks it unread.
    public var unread: Bool?

    public init(key: String) { self.key = key }

    /// Every property it takes, in the order errors name them.
    public static let properties = [
        "key", "agentId", "label", "model", "thinkingLevel", "fastMode", "verboseLevel", "pinned", "archived", "unread", "category",
    ]
    /// The longest label or category, in UTF-8 bytes (OpenClaw's session label limit).
    public static let maxLabelBytes = 512
    /// The longest model, thinking or verbose value, in UTF-8 bytes.
    public static let maxValueBytes = 256

    /// Reads a request's params; a refusal says which property is wrong and how.
    public static func parse(_ fields: [String: JSONValue]) -> Result<SessionPatch, GatewayError> {
        var patch: SessionPatch
        switch SessionParams.key(in: fields, taking: Set(properties)) {
        case .success(let key): patch = SessionPatch(key: key)
        case .failure(let error): return .failure(error)
        }
        do {
            patch.label = try text(fields, "label", maxBytes: maxLabelBytes, emptyClears: true)
            patch.category = try text(fields, "category", maxBytes: maxLabelBytes, emptyClears: true)
            patch.model = try text(fields, "model", maxBytes: maxValueBytes, emptyClears: false)
            patch.thinkingLevel = try text(fields, "thinkingLevel", maxBytes: maxValueBytes, emptyClears: false)
            patch.verboseLevel = try text(fields, "verboseLevel", maxBytes: maxValueBytes, emptyClears: false)
            patch.fastMode = try fastMode(fields["fastMode"])
            patch.pinned = try flag(fields, "pinned")
            patch.archived = try flag(fields, "archived")
            patch.unread = try flag(fields, "unread")
        } catch let error as GatewayError {
            return .failure(error)
        } catch {
            return .failure(.invalid("invalid sessions.patch params"))
        }
        return .success(patch)
    }

    private static func text(_ fields: [String: JSONValue], _ name: String, maxBytes: Int, emptyClears: Bool) throws -> Change<String>? {
        switch fields[name] {
        case nil: return nil
        case .null?: return .clear
        case .string(let text)?:
            guard text.utf8.count <= maxBytes else { throw GatewayError.patchValueTooLong(name, maxBytes: maxBytes) }
            if text.isEmpty {
                guard emptyClears else { throw GatewayError.invalid("\(name) must not be empty") }
                return .clear
            }
            return .set(text)
        default: throw GatewayError.patchNotString(name)
        }
    }

    private static func flag(_ fields: [String: JSONValue], _ name: String) throws -> Bool? {
        switch fields[name] {
        case nil: return nil
        case .bool(let value)?: return value
        default: throw GatewayError.patchNotBool(name)
        }
    }

    private static func fastMode(_ value: JSONValue?) throws -> Change<FastMode>? {
        switch value {
        case nil: return nil
        case .null?: return .clear
        case .bool(let on)?: return .set(on ? .on : .off)
        case .string(let text)? where text.lowercased() == "auto": return .set(.auto)
        default: throw GatewayError.invalid("fastMode must be true, false, \"auto\" or null")
        }
    }
}

/// `sessions.patch`'s answer, OpenClaw's `{ok, key, entry, resolved}`: `resolved` names the
/// backend that answers the session now, as `models.list` lists it (`modelProvider` its kind,
/// `model` its name), and the settings in force.
public struct SessionsPatchResult: Codable, Equatable, Sendable {
    public struct Resolved: Codable, Equatable, Sendable {
        public var modelProvider: String?
        public var model: String
        @ExplicitNull public var thinkingLevel: String?
        @ExplicitNull public var fastMode: JSONValue?
        @ExplicitNull public var verboseLevel: String?

        public init(entry: SessionEntry) {
            modelProvider = entry.modelProvider
            model = entry.model ?? entry.backend ?? ""
            thinkingLevel = entry.thinkingLevel
            fastMode = entry.fastMode
            verboseLevel = entry.verboseLevel
        }
    }

    public var ok = true
    public var key: String
    public var entry: SessionEntry
    public var resolved: Resolved

    public init(key: String, entry: SessionEntry) {
        self.key = key
        self.entry = entry
        resolved = Resolved(entry: entry)
    }
}
