import CompanionWire

/// A request that runs a turn (or opens a session for one), as the socket machine read it: the
/// downstream finds its session in the core, runs it, and answers a failure the way its kind
/// answers (`failure(_:now:)`).
struct CompanionTurnRequest: Equatable {
    enum Kind: Equatable {
        /// `claudeCommand`: every failure is a `claudeResponse` too.
        case command(requestID: String)
        /// `ask`: failures are an `askResponse`.
        case ask(requestID: String)
        /// `streamStart`: the session (and its queued events) first, a prompt when there is one.
        case streamStart(requestID: String?, initialPrompt: String?)
        /// `streamSend`: only to a session that exists.
        case streamSend(requestID: String?)
    }

    var kind: Kind
    /// What to run; nil for a `streamStart` without a prompt.
    var text: String?
    /// The session the client named (a command's unknown id is adopted).
    var sessionID: String?
    /// The working directory the client named, as it named it.
    var directory: String?
    /// The socket's `setWorkingDirectory`, for requests that name none.
    var fallbackDirectory: String?
    /// The turn's client id (its origin, so the answer finds its reply form).
    var clientID: String

    /// How the answer comes back to the asking device.
    var origin: CompanionOrigin { CompanionOrigin(clientID: clientID) }

    /// The frame a failure to open the session or to start the turn is answered with.
    func failure(_ error: CompanionError, now: Int64) -> String {
        switch kind {
        case .command(let requestID):
            CompanionFrame(ClaudeResponse.failure(error.message, sessionID: error.sessionID ?? sessionID), requestID: requestID, at: now).encoded()
        case .ask(let requestID):
            CompanionFrame(AskResponse(success: false, response: nil, error: error.message), requestID: requestID, at: now).encoded()
        case .streamStart(let requestID, _), .streamSend(let requestID):
            CompanionFrame(error.data, requestID: requestID, at: now, error: error.envelope).encoded()
        }
    }
}
