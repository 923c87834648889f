import RelayCore

/// OpenClaw gateway v3 frames: `req`, `res` and `event`, as JSON text.
enum GatewayFrame {
    static func event(_ name: String, _ payload: JSONValue, seq: Int? = nil, stateVersion: JSONValue? = nil) -> String {
        var fields: [String: JSONValue] = ["type": .string("event"), "event": .string(name), "payload": payload]
        if let seq { fields["seq"] = .int(Int64(seq)) }
        if let stateVersion { fields["stateVersion"] = stateVersion }
        return JSONValue.object(fields).encoded()
    }

    /// An event from parts already encoded: payloads are encoded once however many sockets get them.
    static func event(_ name: String, payloadJSON: String, seq: Int, stateVersionJSON: String? = nil) -> String {
        var frame = #"{"event":"# + JSONValue.string(name).encoded() + #","payload":"# + payloadJSON + #","seq":\#(seq)"#
        if let stateVersionJSON { frame += #","stateVersion":"# + stateVersionJSON }
        return frame + #","type":"event"}"#
    }

    static func ok(_ id: String, _ payload: JSONValue) -> String {
        JSONValue.object(["type": .string("res"), "id": .string(id), "ok": .bool(true), "payload": payload]).encoded()
    }

    static func error(_ id: String, _ error: GatewayError) -> String {
        JSONValue.object(["type": .string("res"), "id": .string(id), "ok": .bool(false), "error": error.json]).encoded()
    }
}

/// A gateway error: a code from the protocol's closed set, a message, and machine-readable details.
struct GatewayError: Error {
    enum Code: String {
        case notLinked = "NOT_LINKED"
        case notPaired = "NOT_PAIRED"
        case agentTimeout = "AGENT_TIMEOUT"
        case invalidRequest = "INVALID_REQUEST"
        case unavailable = "UNAVAILABLE"
    }

    var code: Code
    var message: String
    var details: [String: JSONValue] = [:]
    /// The client may send the same request again later.
    var retryable = false

    var json: JSONValue {
        var fields: [String: JSONValue] = ["code": .string(code.rawValue), "message": .string(message)]
        if !details.isEmpty { fields["details"] = .object(details) }
        if retryable { fields["retryable"] = .bool(true) }
        return .object(fields)
    }

    static func invalid(_ message: String, _ details: [String: JSONValue] = [:]) -> GatewayError {
        GatewayError(code: .invalidRequest, message: message, details: details)
    }

    /// Why a connect's credentials were refused, with the details real clients act on.
    enum AuthRefusal {
        case tokenMismatch(canRetryWithDeviceToken: Bool)
        case deviceTokenMismatch
    }

    static func authRefused(_ refusal: AuthRefusal) -> GatewayError {
        switch refusal {
        case .tokenMismatch(let canRetry):
            invalid(
                "unauthorized: gateway token mismatch (provide gateway auth token)",
                [
                    "code": .string("AUTH_TOKEN_MISMATCH"), "authReason": .string("token_mismatch"), "canRetryWithDeviceToken": .bool(canRetry),
                    "recommendedNextStep": .string(canRetry ? "retry_with_device_token" : "update_auth_credentials"),
                ]
            )
        case .deviceTokenMismatch:
            invalid(
                "unauthorized: device token mismatch (rotate/reissue device token)",
                [
                    "code": .string("AUTH_DEVICE_TOKEN_MISMATCH"), "authReason": .string("device_token_mismatch"),
                    "canRetryWithDeviceToken": .bool(false),
                    "recommendedNextStep": .string("update_auth_credentials"),
                ]
            )
        }
    }
}

/// A parsed `req` frame.
struct GatewayRequest {
    var id: String
    var method: String
    var params: [String: JSONValue]

    /// Nil when the text is not a request frame (the caller decides what that means).
    init?(_ frame: JSONValue) {
        guard frame["type"]?.stringValue == "req", let id = frame["id"]?.stringValue, let method = frame["method"]?.stringValue else { return nil }
        self.id = id
        self.method = method
        self.params = frame["params"]?.objectValue ?? [:]
    }

    func string(_ key: String) -> String? { params[key]?.stringValue }

    func strings(_ key: String) -> [String] { params[key]?.arrayValue?.compactMap(\.stringValue) ?? [] }
}
