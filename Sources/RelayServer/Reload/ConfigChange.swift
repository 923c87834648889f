/// One difference between the configuration the relay runs and its file's, as a reload logs it:
/// `log_level of [server] changed (info → debug)`, `[[backends]] two added (command)`,
/// `listen of [gateway] changed (127.0.0.1:18789 → 127.0.0.1:18790): needs a restart`.
public struct ConfigChange: Sendable, Equatable, CustomStringConvertible {
    /// What changed, as the file names it: `log_level of [server]`, `[[backends]] two`, `[push]`.
    public let subject: String
    /// `added`, `removed` or `changed`.
    public let verb: String
    /// Old and new value, or what was added; nil when it would show a secret or says nothing more.
    public let detail: String?
    /// A reload cannot apply it: the relay keeps running as it was started until it restarts.
    public let needsRestart: Bool

    public init(_ subject: String, _ verb: String, detail: String? = nil, needsRestart: Bool = false) {
        self.subject = subject
        self.verb = verb
        self.detail = detail
        self.needsRestart = needsRestart
    }

    public var description: String {
        "\(subject) \(verb)" + (detail.map { " (\($0))" } ?? "") + (needsRestart ? ": needs a restart" : "")
    }

    /// `old → new` for a change whose values may be shown.
    static func changed(_ subject: String, from old: String?, to new: String?, needsRestart: Bool = false) -> ConfigChange {
        let detail = old.flatMap { old in new.map { "\(old) → \($0)" } }
        return ConfigChange(subject, "changed", detail: detail, needsRestart: needsRestart)
    }
}
