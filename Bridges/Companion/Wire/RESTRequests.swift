// The REST API's request bodies, read as leniently as the real server reads them.

/// `POST /api/ask {prompt, workingDirectory?, sessionId?}` and `POST /api/stream/:id {prompt}`.
public struct PromptBody: Sendable, Equatable {
    public var prompt: String
    public var workingDirectory: String?
    public var sessionId: String?

    /// A non-empty prompt of at most `CompanionLimits.maxPromptBytes` (400 or 413 otherwise).
    public static func read(_ body: CompanionFields) -> Result<PromptBody, CompanionHTTPError> {
        guard let prompt = body.nonEmptyString("prompt") else { return .failure(.promptRequired) }
        guard prompt.utf8.count <= CompanionLimits.maxPromptBytes else { return .failure(.promptTooLarge) }
        return .success(PromptBody(prompt: prompt, workingDirectory: body.string("workingDirectory"), sessionId: body.string("sessionId")))
    }
}

/// `POST /api/stream/start {workingDirectory?, prompt?}`.
public struct StreamStartBody: Sendable, Equatable {
    public var prompt: String?
    public var workingDirectory: String?

    public static func read(_ body: CompanionFields) -> Result<StreamStartBody, CompanionHTTPError> {
        let prompt = body.nonEmptyString("prompt")
        if let prompt, prompt.utf8.count > CompanionLimits.maxPromptBytes { return .failure(.streamPromptTooLarge) }
        return .success(StreamStartBody(prompt: prompt, workingDirectory: body.string("workingDirectory")))
    }
}

/// `POST /api/sessions/continue {sessionId, workingDirectory}`: both required, non-empty.
public struct ContinueBody: Sendable, Equatable {
    public var sessionId: String
    public var workingDirectory: String

    public static func read(_ body: CompanionFields) -> Result<ContinueBody, CompanionHTTPError> {
        guard let sessionId = body.nonEmptyString("sessionId"), let workingDirectory = body.nonEmptyString("workingDirectory") else {
            return .failure(.continueFieldsRequired)
        }
        return .success(ContinueBody(sessionId: sessionId, workingDirectory: workingDirectory))
    }
}
