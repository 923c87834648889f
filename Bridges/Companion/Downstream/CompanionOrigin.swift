/// What started a turn, carried in its client id so that an answer (live or queued, on any socket
/// of the asking device) finds its reply form again.
enum CompanionOrigin: Equatable {
    /// `claudeCommand`: answered with `claudeResponse` and the request id.
    case command(requestID: String)
    /// `ask`: answered with `askResponse` and the request id.
    case ask(requestID: String)
    /// `streamStart`/`streamSend` or REST: no reply frame.
    case stream

    private static let commandPrefix = "cmd:"
    private static let askPrefix = "ask:"
    private static let streamPrefix = "stream:"

    init(clientID: String) {
        if clientID.hasPrefix(Self.commandPrefix) {
            self = .command(requestID: String(clientID.dropFirst(Self.commandPrefix.count)))
        } else if clientID.hasPrefix(Self.askPrefix) {
            self = .ask(requestID: String(clientID.dropFirst(Self.askPrefix.count)))
        } else {
            self = .stream
        }
    }

    /// The turn's client id: unique per device, so a resent request is the same turn.
    func clientID(streamID: @autoclosure () -> String) -> String {
        switch self {
        case .command(let requestID): Self.commandPrefix + requestID
        case .ask(let requestID): Self.askPrefix + requestID
        case .stream: Self.streamPrefix + streamID()
        }
    }

    /// A REST call's turn (`http:` + a fresh id; never a reply frame).
    static func restClientID(_ id: String) -> String { "http:" + id }
}
