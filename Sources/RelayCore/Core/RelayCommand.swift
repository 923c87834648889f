import Foundation

/// A message the relay answers itself, in any protocol: it is stored in the conversation's
/// history like any message, its reply is stored as the answer, and no backend sees either
/// (`/compact` excepted, on a backend that compacts: it is that backend's own command).
public enum RelayCommand: Equatable, Sendable {
    /// `/backend` shows the conversation's backend and the choices; `/backend NAME` binds the
    /// conversation to `NAME` for the turns after it.
    case backend(String?)
    /// `/approve ID`, `/always ID`, `/deny ID`: decides the user's pending approval that ID (a
    /// unique prefix of 4+ characters) names; without an ID, the user's only pending one. Answered
    /// at once, not behind the conversation's running turn (which may be the one waiting).
    case approval(ApprovalDecision, String?)
    /// `/new`, `/reset`, `/clear` (OpenClaw's gateway commands): a fresh session for the
    /// conversation's keys (`Turns.reset`), after the turns before it.
    case reset(ResetReason)
    /// `/model NAME`: `/backend NAME` in OpenClaw's words (`<kind>/NAME`, as its pickers write a
    /// model, is taken too); bare, it shows the choices.
    case model(String?)
    /// `/think LEVEL`: the conversation's thinking level (`ThinkingLevel`; `default` clears it);
    /// bare, it shows the level.
    case think(String?)
    /// `/compact`: a backend that compacts its context does (Claude Code's own `/compact`); the
    /// others say they have nothing to compact.
    case compact
    /// `/stop`: stops the conversation's running and queued turns, at once.
    case stop

    static let approvalWords: [String: ApprovalDecision] = ["/approve": .allowOnce, "/always": .allowAlways, "/deny": .deny]

    public init?(_ text: String) {
        // Every turn asks; almost none is a command: decide on the first non-blank byte before
        // paying for Foundation's trimming.
        // (A non-ASCII first byte may be Unicode white space: the full path decides.)
        let first = text.utf8.first { $0 != 0x20 && !(0x09...0x0D).contains($0) }
        guard let first, first == UInt8(ascii: "/") || first >= 0x80 else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let word = String(trimmed.prefix { !$0.isWhitespace })
        let rest = trimmed.dropFirst(word.count).trimmingCharacters(in: .whitespacesAndNewlines)
        let argument = rest.isEmpty ? nil : rest
        switch word {
        case "/backend": self = .backend(argument)
        case "/model": self = .model(argument)
        case "/think": self = .think(argument)
        case "/new" where argument == nil: self = .reset(.new)
        case "/reset" where argument == nil, "/clear" where argument == nil: self = .reset(.reset)
        case "/compact" where argument == nil: self = .compact
        case "/stop" where argument == nil: self = .stop
        default:
            guard let decision = Self.approvalWords[word] else { return nil }
            self = .approval(decision, argument)
        }
    }

    /// Answered at once, beside the conversation's turns (not in its queue).
    var isAside: Bool {
        switch self {
        case .approval, .stop: true
        default: false
        }
    }
}

/// Why a conversation starts afresh, as OpenClaw's `sessions.reset` and `sessions.changed` name it.
public enum ResetReason: String, Sendable, Equatable {
    case new, reset
}
