import Foundation
import RelayKit

// Permission prompts as the real app (dock108/aicli-companion at f006a15, `Message.swift`) shows
// and answers them: `permissionRequest` in, the option tapped back as `permission`.

/// What a person answers to a permission prompt.
public enum PermissionChoice: String, Sendable, CaseIterable {
    case allowOnce
    case allowAlways
    case deny

    /// The option as the prompt offers it (and the app sends back when it is tapped).
    public var option: String {
        switch self {
        case .allowOnce: "Allow once"
        case .allowAlways: "Always allow"
        case .deny: "Deny"
        }
    }

    /// Longest `response` read, in UTF-8 bytes.
    public static let maxResponseBytes = 256

    /// The spellings taken besides the options: the real server's `y`/`n`, the relay's own
    /// decision names, and the plain words people type. Only whole answers count: a phrase that
    /// merely contains "yes" is not an approval.
    private static let spellings: [String: PermissionChoice] = [
        "allow once": .allowOnce, "allow": .allowOnce, "allowed": .allowOnce, "approve": .allowOnce, "approved": .allowOnce,
        "yes": .allowOnce, "y": .allowOnce, "ok": .allowOnce, "okay": .allowOnce, "accept": .allowOnce, "once": .allowOnce,
        "allow-once": .allowOnce, "allow_once": .allowOnce, "allowonce": .allowOnce,
        "always allow": .allowAlways, "allow always": .allowAlways, "always": .allowAlways, "always approve": .allowAlways,
        "approve always": .allowAlways, "yes always": .allowAlways, "allow-always": .allowAlways, "allow_always": .allowAlways,
        "allowalways": .allowAlways,
        "deny": .deny, "denied": .deny, "no": .deny, "n": .deny, "reject": .deny, "decline": .deny, "don't allow": .deny,
        "do not allow": .deny, "cancel": .deny,
    ]

    /// The choice a `response` names (case, surrounding blanks and a final "." or "!" do not
    /// matter); `remember` makes an allowance an always-allowance, as the app's flag means.
    /// Nil when it names none.
    public init?(response: String, remember: Bool) {
        var words = response.lowercased().replacingOccurrences(of: "\u{2019}", with: "'")
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
        while let last = words.last, last == "." || last == "!" { words.removeLast() }
        guard let choice = Self.spellings[words] else { return nil }
        self = remember && choice == .allowOnce ? .allowAlways : choice
    }
}

/// `permission {sessionId, response, remember}`: the app sends the option tapped and always
/// `remember: false`; guide clients may set it.
public struct PermissionAnswer: CompanionPayload, Equatable {
    public static let type = "permission"
    public var sessionId: String?
    public var response: String
    public var remember: Bool

    public init(sessionId: String?, response: String, remember: Bool = false) {
        self.sessionId = sessionId
        self.response = response
        self.remember = remember
    }

    /// `response` is required, a string of at most `PermissionChoice.maxResponseBytes`.
    public init(_ data: CompanionFields) throws(CompanionError) {
        let response = try data.requiredString("response")
        guard response.utf8.count <= PermissionChoice.maxResponseBytes else {
            throw .invalid("response is longer than \(PermissionChoice.maxResponseBytes) bytes")
        }
        self.init(sessionId: try data.optionalString("sessionId"), response: response, remember: data.bool("remember") ?? false)
    }

    /// What the answer means; nil when `response` is none of the spellings.
    public var choice: PermissionChoice? { PermissionChoice(response: response, remember: remember) }

    /// The refusal of a `response` that names no choice.
    public static func unknownResponse(sessionID: String?) -> CompanionError {
        let options = PermissionChoice.allCases.map(\.option).joined(separator: ", ")
        return CompanionError(.invalidMessage, "response must be one of \(options) (or y, n)", sessionID: sessionID)
    }
}

/// A prompt the app shows as an alert: `prompt` above one button per option. `timeout` is the
/// seconds left before the relay denies it. The app ignores the relay's `approvalId` and `toolName`.
public struct PermissionRequest: CompanionPayload, Equatable {
    public static let type = "permissionRequest"
    public var sessionId: String
    public var prompt: String
    public var options: [String]
    public var defaultOption: String
    public var timeout: Int
    /// The short id the relay's notes show (`/approve ID` answers it from any app).
    public var approvalId: String
    public var toolName: String

    public init(sessionId: String, prompt: String, options: [String], defaultOption: String, timeout: Int, approvalId: String, toolName: String) {
        self.sessionId = sessionId
        self.prompt = prompt
        self.options = options
        self.defaultOption = defaultOption
        self.timeout = timeout
        self.approvalId = approvalId
        self.toolName = toolName
    }
}

/// The reply to `permission` (and the body of `POST /api/permission/:sessionId`), in the real
/// server's form plus what was decided. The app has no decoder for it and ignores it.
public struct PermissionReply: CompanionPayload, Equatable {
    public static let type = "permission"
    public var success = true
    public var handled = true
    public var sessionId: String
    /// Whether the tool may run.
    public var accepted: Bool
    /// `allow-once`, `allow-always` or `deny`.
    public var decision: String
    public var approvalId: String
    public var message: String
    public var timestamp: String

    public init(sessionId: String, accepted: Bool, decision: String, approvalId: String, message: String, timestamp: String) {
        self.sessionId = sessionId
        self.accepted = accepted
        self.decision = decision
        self.approvalId = approvalId
        self.message = message
        self.timestamp = timestamp
    }
}

/// A line about a session that is not its answer: a permission prompt answered (here or
/// elsewhere), a backend's status. The app decodes it and shows only `queue` stages.
public struct Progress: CompanionPayload, Equatable {
    public static let type = "progress"
    public var sessionId: String
    public var stage: String
    public var message: String
    public var timestamp: String

    public init(sessionId: String, stage: String, message: String, timestamp: String) {
        self.sessionId = sessionId
        self.stage = stage
        self.message = message
        self.timestamp = timestamp
    }

    /// A permission prompt was answered, by anyone, or expired or was cancelled.
    public static let permissionResolved = "permission_resolved"
    /// A backend's line about a running command ("API overloaded, retrying 2/10").
    public static let status = "status"
}
