/// What a user may answer to an approval (the gateway's `allow-once`, `allow-always`, `deny`).
public enum ApprovalChoice: String, Sendable, Equatable, CaseIterable {
    case allowOnce = "allow-once"
    case allowAlways = "allow-always"
    case deny

    /// The key that answers it (with Alt) and the words the approval row shows for it.
    public var key: Character {
        switch self {
        case .allowOnce: "o"
        case .allowAlways: "s"
        case .deny: "n"
        }
    }

    /// As the approval row names it, next to its key.
    var shortLabel: String {
        switch self {
        case .allowOnce: "allow once"
        case .allowAlways: "always"
        case .deny: "deny"
        }
    }

    var label: String {
        switch self {
        case .allowOnce: "allow once"
        case .allowAlways: "always (this session)"
        case .deny: "deny"
        }
    }
}

/// A tool use waiting for the user's decision, as the gateway announced it
/// (`exec.approval.requested` for a command, `plugin.approval.requested` for any other tool).
public struct PendingApproval: Sendable, Equatable {
    /// Which of the gateway's approval families it is: its answer goes to `<kind>.approval.resolve`.
    public enum Kind: String, Sendable, Equatable {
        case exec
        case plugin
    }

    /// The gateway's id (the relay's full id; `/approve` takes any unique prefix).
    public var id: String
    public var kind: Kind
    /// The session key of the conversation whose run waits; nil when the gateway did not say.
    public var key: String?
    /// One line saying what is asked: "run `touch x`", or the plugin approval's title.
    public var summary: String
    /// More, when the gateway gave it (a plugin approval's description).
    public var detail: String?
    public var choices: [ApprovalChoice]
    /// Unix milliseconds.
    public var createdAt: Int64
    public var expiresAt: Int64
    /// The decision sent and not yet confirmed.
    public var answering: ApprovalChoice?

    public init(
        id: String,
        kind: Kind,
        key: String?,
        summary: String,
        detail: String? = nil,
        choices: [ApprovalChoice] = ApprovalChoice.allCases,
        createdAt: Int64,
        expiresAt: Int64
    ) {
        self.id = id
        self.kind = kind
        self.key = key
        self.summary = summary
        self.detail = detail
        self.choices = choices
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// The first characters of the id, enough to name it to `/approve`.
    public var shortID: String { String(id.prefix(8)) }
}
