import RelayCore

/// A frame a Companion server sent, read as far as the upstream client needs it.
///
/// Tolerant reader: both the real server's forms and the relay's (the integration guide's) are
/// accepted, unknown types become `.other`, extra fields are ignored.
enum UpstreamFrame: Equatable, Sendable {
    /// The server spoke first; the link is usable from now on.
    case welcome(serverVersion: String?)
    /// The reply to `streamStart`: `streamStarted` (relay, guide) or `streamStart` (real server).
    case sessionStarted(requestID: String?, sessionID: String?)
    case chunk(UpstreamChunk)
    /// The answer to a `claudeCommand`.
    case response(UpstreamResponse)
    /// `error {error:{code,message}}` (real server) and/or `{data:{code,message}}` (relay, guide).
    case error(requestID: String?, code: String, message: String)
    case pong
    case other(type: String)

    /// Nil when the text is not a JSON object with a string `type`.
    static func decode(_ bytes: [UInt8]) -> UpstreamFrame? {
        guard let frame = JSONValue.parse(bytes), let type = frame["type"]?.stringValue else { return nil }
        let requestID = frame["requestId"]?.stringValue
        let data = frame["data"] ?? .null
        switch type {
        case "welcome":
            return .welcome(serverVersion: data["serverVersion"]?.stringValue)
        case "streamStarted", "streamStart":
            if data["success"]?.boolValue == false {
                let message = data["message"]?.stringValue ?? data["error"]?.stringValue ?? "the server refused to start a session"
                return .error(requestID: requestID, code: "STREAM_START_FAILED", message: message)
            }
            return .sessionStarted(requestID: requestID, sessionID: data["sessionId"]?.stringValue)
        case "streamChunk":
            return UpstreamChunk(frame: frame).map(UpstreamFrame.chunk) ?? .other(type: type)
        case "claudeResponse":
            return .response(UpstreamResponse(requestID: requestID, data: data))
        case "error":
            return errorFrame(requestID: requestID, frame: frame)
        case "pong":
            return .pong
        default:
            return .other(type: type)
        }
    }

    private static func errorFrame(requestID: String?, frame: JSONValue) -> UpstreamFrame {
        let error = frame["error"] ?? .null
        let data = frame["data"] ?? .null
        let code = error["code"]?.stringValue ?? data["code"]?.stringValue ?? "ERROR"
        let message =
            [error["message"], data["message"], data["error"], frame["error"]].lazy.compactMap { $0?.stringValue }.first { !$0.isEmpty }
            ?? "the server reported \(code)"
        return .error(requestID: requestID, code: code, message: message)
    }
}

/// One `streamChunk`: `data {sessionId, chunk {id, type, content, isFinal}}`.
struct UpstreamChunk: Equatable, Sendable {
    var sessionID: String
    var type: String
    var content: String
    /// Replayed from the server's queue (`_queued: true`): output of an earlier connection's turn.
    var isQueued: Bool

    init(sessionID: String, type: String, content: String, isQueued: Bool = false) {
        self.sessionID = sessionID
        self.type = type
        self.content = content
        self.isQueued = isQueued
    }

    init?(frame: JSONValue) {
        let data = frame["data"] ?? .null
        guard let sessionID = data["sessionId"]?.stringValue, let chunk = data["chunk"] else { return nil }
        self.sessionID = sessionID
        type = chunk["type"]?.stringValue ?? ""
        content = chunk["content"]?.stringValue ?? ""
        isQueued = frame["_queued"]?.boolValue == true || data["_queued"]?.boolValue == true
    }
}

/// `claudeResponse {content, success, sessionId, error}`.
struct UpstreamResponse: Equatable, Sendable {
    var requestID: String?
    var success: Bool
    var content: String
    var error: String?

    init(requestID: String?, success: Bool, content: String, error: String? = nil) {
        self.requestID = requestID
        self.success = success
        self.content = content
        self.error = error
    }

    init(requestID: String?, data: JSONValue) {
        let error = data["error"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        self.init(
            requestID: requestID,
            success: data["success"]?.boolValue ?? (error == nil),
            content: data["content"]?.stringValue ?? "",
            error: error
        )
    }
}
