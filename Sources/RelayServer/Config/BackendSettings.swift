/// One `[[backends]]` entry: a built-in backend that answers turns.
public struct BackendSettings: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Answers `echo: <text>`, waiting `delayMillis` before each step.
        case echo(delayMillis: Int)
        /// Runs `command` per turn with the text on stdin, killed after `timeoutSeconds`.
        case command(command: [String], timeoutSeconds: Int)
    }

    public var name: String
    public var kind: Kind

    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// The backend used when a file has no `[[backends]]`: `echo`, answering at once.
    public static let defaultEcho = BackendSettings(name: "echo", kind: .echo(delayMillis: 0))
}

/// The `[audit]` section: every frame in and out, redacted, kept for a number of days.
public struct AuditSettings: Sendable, Equatable {
    public var enabled: Bool
    public var retentionDays: Int

    public init(enabled: Bool = true, retentionDays: Int = 30) {
        self.enabled = enabled
        self.retentionDays = retentionDays
    }
}
