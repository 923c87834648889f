/// One change to a stored conversation that any protocol (or the operator) can ask for.
public enum ConversationEdit: Sendable, Equatable {
    /// Answered by another `[[backends]]` entry from its next turn (nil: the protocol's default).
    case rebind(backend: String?)
    /// A new title (nil: none, clients show their default name).
    case retitle(String?)
    /// Archived (hidden from lists that leave archived ones out), or back.
    case archive(Bool)
    /// One of the user's settings for it.
    case configure(ConversationSetting)
    /// Several edits applied together, as one change.
    case all([ConversationEdit])

    /// Applies the edit as of `now`: the conversation's change time and the times of its
    /// archiving and pinning follow. Every journal applies edits through this.
    public func apply(to conversation: inout Conversation, at now: Int64) {
        let (wasArchived, wasPinned) = (conversation.archived, conversation.settings.pinned)
        apply(to: &conversation)
        if conversation.archived != wasArchived { conversation.archivedAt = conversation.archived ? now : nil }
        if conversation.settings.pinned != wasPinned { conversation.settings.pinnedAt = conversation.settings.pinned ? now : nil }
        conversation.updatedAt = now
    }

    private func apply(to conversation: inout Conversation) {
        switch self {
        case .rebind(let backend): conversation.backend = backend
        case .retitle(let title): conversation.title = title
        case .archive(let archived): conversation.archived = archived
        case .configure(let setting): setting.apply(to: &conversation.settings)
        case .all(let edits): for edit in edits { edit.apply(to: &conversation) }
        }
    }
}

/// One of `ConversationSettings`, set (nil clears the optional ones).
public enum ConversationSetting: Sendable, Equatable {
    case thinkingLevel(String?)
    case fastMode(ConversationSettings.FastMode?)
    case verboseLevel(String?)
    case category(String?)
    case pinned(Bool)
    case markedUnread(Bool)

    func apply(to settings: inout ConversationSettings) {
        switch self {
        case .thinkingLevel(let level): settings.thinkingLevel = level
        case .fastMode(let mode): settings.fastMode = mode
        case .verboseLevel(let level): settings.verboseLevel = level
        case .category(let category): settings.category = category
        case .pinned(let pinned): settings.pinned = pinned
        case .markedUnread(let marked): settings.markedUnread = marked
        }
    }
}

/// A user's thread with one backend: the unit that owns turns and history.
///
/// Protocols name a conversation their own way (`ConversationKey`); the core only knows its id.
public struct Conversation: Sendable, Equatable, Codable {
    public var id: String
    public var userID: String
    public var title: String?
    /// The `[[backends]]` entry (one account of one backend kind) that answers it; nil = the
    /// default of the protocol that created it.
    public var backend: String?
    /// Where a coding backend runs for this conversation (Companion's working directory).
    public var workingDirectory: String?
    /// The backend's own session id (Claude Code's `--resume`), as it last reported it.
    public var backendSession: String?
    public var createdAt: Int64
    public var updatedAt: Int64
    public var archived: Bool
    /// When it was archived (nil while it is not).
    public var archivedAt: Int64?
    /// The user's settings for it (thinking level, pinned, category, …).
    public var settings = ConversationSettings()
    /// The user clock's seq of its last change (creation, rename, archive, rebinding): clients
    /// that sync by seq see it again once this passes their cursor.
    public var changeSeq: Int64 = 0
    /// The longest title a client may set, in UTF-8 bytes.
    public static let maxTitleBytes = 512

    /// Every protocol name the conversation has.
    public var keys: [ConversationKey]

    public init(
        id: String,
        userID: String,
        title: String? = nil,
        backend: String? = nil,
        workingDirectory: String? = nil,
        backendSession: String? = nil,
        createdAt: Int64,
        updatedAt: Int64,
        archived: Bool = false,
        keys: [ConversationKey] = []
    ) {
        self.id = id
        self.userID = userID
        self.title = title
        self.backend = backend
        self.workingDirectory = workingDirectory
        self.backendSession = backendSession
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.archived = archived
        self.keys = keys
    }

    /// The conversation's name in `scheme`, if it has one.
    public func key(in scheme: String) -> String? { keys.first { $0.scheme == scheme }?.value }

    /// A new conversation id, `cv_<uuid>`.
    public static func newID() -> String { "cv_" + Identifiers.newUUID() }
}

/// One protocol's name for a conversation, unique per user and scheme.
///
/// Schemes in use: `session` (a gateway session key; Clawline's single timeline is session
/// `main`), `companion` (a Companion session id) and `companion.dir` (a Companion working
/// directory, so there is one session per directory).
public struct ConversationKey: Hashable, Sendable, Codable, CustomStringConvertible {
    public var scheme: String
    public var value: String

    public init(_ scheme: String, _ value: String) {
        self.scheme = scheme
        self.value = value
    }

    /// The scheme of gateway session keys (and Clawline's timeline and admin channel).
    public static let sessionScheme = "session"

    public static func session(_ key: String) -> ConversationKey { ConversationKey(sessionScheme, key) }

    /// Clawline's single timeline.
    public static let main = ConversationKey.session("main")

    public var description: String { "\(scheme):\(value)" }
}

/// What a conversation looks like when a key names it for the first time.
public struct ConversationDraft: Sendable, Equatable {
    public var title: String?
    public var backend: String?
    public var workingDirectory: String?
    /// The settings it starts with.
    public var settings: ConversationSettings
    /// More keys that name the new conversation too (e.g. its working directory).
    public var extraKeys: [ConversationKey]

    public init(
        title: String? = nil,
        backend: String? = nil,
        workingDirectory: String? = nil,
        settings: ConversationSettings = ConversationSettings(),
        extraKeys: [ConversationKey] = []
    ) {
        self.title = title
        self.settings = settings
        self.backend = backend
        self.workingDirectory = workingDirectory
        self.extraKeys = extraKeys
    }
}
