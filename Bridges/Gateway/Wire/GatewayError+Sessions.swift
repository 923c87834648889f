/// The errors of the session methods (`sessions.patch`, `sessions.reset`, `sessions.create`,
/// `sessions.delete`, `sessions.compact`), OpenClaw's `INVALID_REQUEST` with a message naming the
/// property.
extension GatewayError {
    public static func patchValueTooLong(_ property: String, maxBytes: Int) -> GatewayError {
        invalid("\(property) is longer than \(maxBytes) bytes")
    }
    public static func patchNotString(_ property: String) -> GatewayError { invalid("\(property) must be a string or null") }
    public static func patchNotBool(_ property: String) -> GatewayError { invalid("\(property) must be a boolean") }
    /// A model no backend of the relay answers to (`models.list` lists the ones it does).
    public static func unknownModel(_ model: String, known: [String]) -> GatewayError {
        invalid("unknown model \(model.prefix(128)); models.list has: \(known.joined(separator: ", "))", code: "UNKNOWN_MODEL")
    }
    public static func invalidLevel(_ property: String, choices: [String]) -> GatewayError {
        invalid("invalid \(property) (use \(choices.joined(separator: "|")))")
    }
    public static let patchNotStored = unavailable("the session could not be changed")
    /// A property the method does not take (refused rather than silently ignored).
    public static func unsupportedProperty(_ property: String) -> GatewayError { invalid("unsupported property '\(property.prefix(64))'") }
    /// `expectedSessionId` is not the session's id any more (reset or replaced meanwhile):
    /// `details.reason` `session-changed`, as OpenClaw's guard answers.
    public static func sessionChanged(_ key: String) -> GatewayError {
        var details = Details()
        details.reason = "session-changed"
        return GatewayError(.invalidRequest, "Session \(key.prefix(128)) changed; retry.", details: details)
    }
    /// `sessions.delete {archivedOnly: true}` of a session that is not archived.
    public static func notArchived(_ key: String) -> GatewayError { invalid("Session \(key.prefix(128)) is not archived.") }
    /// OpenClaw's refusal, word for word.
    public static let mainSessionUndeletable = invalid("Cannot delete the main session (main).")
}
