import Foundation
import RelayCore

/// Server frames in the form the app decodes: `{type, requestId, timestamp, data}`, the timestamp
/// an ISO 8601 UTC string with milliseconds, `requestId` null on everything that is not a reply.
enum CompanionWire {
    static let serverVersion = "1.0.0"
    static let capabilities = ["chat", "streaming", "permissions", "file-operations", "session-management"]

    static func frame(
        _ type: String,
        requestID: String? = nil,
        at millis: Int64,
        _ data: [String: JSONValue],
        extra: [String: JSONValue] = [:]
    ) -> String {
        var fields = extra
        fields["type"] = .string(type)
        fields["requestId"] = requestID.map(JSONValue.string) ?? .null
        fields["timestamp"] = .string(timestamp(millis))
        fields["data"] = .object(data)
        return JSONValue.object(fields).encoded()
    }

    /// An error in the real server's envelope (`error`) with the `data` the app needs.
    static func error(_ error: CompanionError, requestID: String?, at millis: Int64) -> String {
        frame("error", requestID: requestID, at: millis, error.data, extra: ["error": error.envelope])
    }

    /// `2026-11-22T10:00:00.123Z`: what JavaScript's `toISOString()` writes and the app parses.
    static func timestamp(_ millis: Int64) -> String {
        var seconds = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let fraction = Int((millis % 1000 + 1000) % 1000)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900,
            Int(parts.tm_mon) + 1,
            Int(parts.tm_mday),
            Int(parts.tm_hour),
            Int(parts.tm_min),
            Int(parts.tm_sec),
            fraction
        )
    }
}

/// A protocol error: a code from the documented set and a message for people.
struct CompanionError: Error, Sendable, Equatable {
    var code: String
    var message: String
    var sessionID: String?
    var details: [String: JSONValue] = [:]

    static func invalid(_ message: String) -> CompanionError { CompanionError(code: "INVALID_MESSAGE", message: message) }

    /// The `data` the app decodes: code, a non-empty message, details, and the session when there is one.
    var data: [String: JSONValue] {
        var data: [String: JSONValue] = ["code": .string(code), "message": .string(message), "details": .object(details)]
        if let sessionID { data["sessionId"] = .string(sessionID) }
        return data
    }

    /// The real server's `error` field.
    var envelope: JSONValue { .object(["code": .string(code), "message": .string(message)]) }
    static func invalidSession(_ sessionID: String) -> CompanionError {
        CompanionError(code: "INVALID_SESSION", message: "session \(sessionID.prefix(64)) not found", sessionID: sessionID)
    }
}

/// A client frame: the envelope `{type, requestId?, data}`, or the app's bare
/// `{type:"client_backgrounding", sessionId, timestamp}`.
struct CompanionRequest {
    var type: String
    var requestID: String?
    var data: [String: JSONValue]

    static func parse(_ bytes: [UInt8]) -> Result<CompanionRequest, CompanionError> {
        guard let json = JSONValue.parse(bytes), case .object(let fields) = json else { return .failure(.invalid("the frame is not a JSON object")) }
        guard let type = fields["type"]?.stringValue, !type.isEmpty else { return .failure(.invalid("type must be a non-empty string")) }
        var requestID: String?
        switch fields["requestId"] {
        case nil, .null?: break
        case .string(let id)? where id.utf8.count <= 256: requestID = id
        default: return .failure(.invalid("requestId must be a string of at most 256 bytes"))
        }
        var data: [String: JSONValue]
        switch fields["data"] {
        case nil, .null?: data = [:]
        case .object(let object)?: data = object
        default: return .failure(.invalid("data must be an object"))
        }
        // The app backgrounds with its fields at the top level.
        if data.isEmpty, let sessionID = fields["sessionId"] { data["sessionId"] = sessionID }
        return .success(CompanionRequest(type: type, requestID: requestID, data: data))
    }

    func string(_ key: String) -> String? { data[key]?.stringValue }

    /// A present field must be a string; an absent or null one is nil.
    func optionalString(_ key: String) throws(CompanionError) -> String? {
        switch data[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw .invalid("\(key) must be a string")
        }
    }

    func requiredString(_ key: String) throws(CompanionError) -> String {
        guard let value = try optionalString(key), !value.isEmpty else { throw .invalid("\(key) is required") }
        return value
    }
}
