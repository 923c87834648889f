import RelayKit

/// A frame a Companion server sent, read as far as a client (the relay's upstream account) needs it.
///
/// Tolerant reader: both the real server's forms and the relay's (the integration guide's) are
/// accepted, unknown types become `.other`, extra fields are ignored. Pure.
public enum CompanionServerEvent: Equatable, Sendable {
    /// The server spoke first; the link is usable from now on.
    case welcome(serverVersion: String?)
    /// The reply to `streamStart`: `streamStarted` (relay, guide) or `streamStart` (real server).
    case sessionStarted(requestID: String?, sessionID: String?)
    /// `queued`: replayed from the server's queue (`_queued: true`), output of an earlier connection's turn.
    case chunk(StreamChunk, queued: Bool)
    /// The answer to a `claudeCommand`.
    case response(requestID: String?, ClaudeResponse)
    /// `error {error:{code,message}}` (real server) and/or `{data:{code,message}}` (relay, guide).
    case error(requestID: String?, code: String, message: String)
    case pong
    case other(type: String)

    /// Nil when the text is not a JSON object with a string `type`.
    public static func decode(_ bytes: [UInt8]) -> CompanionServerEvent? {
        guard let frame = JSONValue.parse(bytes), let type = frame["type"]?.stringValue else { return nil }
        let requestID = frame["requestId"]?.stringValue
        let data = CompanionFields(frame["data"]) ?? CompanionFields()
        switch type {
        case Welcome.type:
            return .welcome(serverVersion: Welcome(data).serverVersion)
        case StreamStarted.type, StreamStart.type:
            if data.bool("success") == false {
                let message = data.string("message") ?? data.string("error") ?? "the server refused to start a session"
                return .error(requestID: requestID, code: CompanionErrorCode.streamStartFailed.rawValue, message: message)
            }
            return .sessionStarted(requestID: requestID, sessionID: data.string("sessionId"))
        case StreamChunk.type:
            guard let chunk = StreamChunk(data) else { return .other(type: type) }
            return .chunk(chunk, queued: frame["_queued"]?.boolValue == true || data.bool("_queued") == true)
        case ClaudeResponse.type:
            return .response(requestID: requestID, ClaudeResponse(data))
        case ErrorData.type:
            return error(requestID: requestID, frame: frame, data: data)
        case Pong.type:
            return .pong
        default:
            return .other(type: type)
        }
    }

    private static func error(requestID: String?, frame: JSONValue, data: CompanionFields) -> CompanionServerEvent {
        let envelope = CompanionFields(frame["error"]) ?? CompanionFields()
        let code = envelope.string("code") ?? data.string("code") ?? "ERROR"
        let message =
            [envelope.string("message"), data.string("message"), data.string("error"), frame["error"]?.stringValue].lazy.compactMap { $0 }
            .first { !$0.isEmpty } ?? "the server reported \(code)"
        return .error(requestID: requestID, code: code, message: message)
    }
}
