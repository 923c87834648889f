import RelayKit

extension ClientFrame {
    public static let maxClaimedNameBytes = 64
    /// Longest client message id, in UTF-8 bytes.
    public static let maxMessageIDBytes = 128

    /// A text frame as the relay's listener reads it: every rule of the schema, with the error it
    /// gets (malformed JSON closes without one; a bad `protocolVersion` closes; the rest leaves the
    /// socket open). Pure: unit-tested and fuzzed.
    public static func decode(_ text: String) -> Result<ClientFrame, FrameRejection> {
        guard let json = JSONValue.parse(text) else { return .failure(.malformed) }
        guard case .object(let fields) = json else { return refused(.invalid("frame must be a JSON object")) }
        guard let type = fields["type"]?.stringValue else { return refused(.invalid("missing type")) }
        do throws(ClawlineError) {
            switch type {
            case "pair_request": return .success(.pairRequest(try pairRequest(fields)))
            case "pair_decision": return .success(.pairDecision(try pairDecision(fields)))
            case "auth": return .success(.auth(try auth(fields)))
            case "message": return .success(.message(try message(fields)))
            case "typing": return .success(.typing(try typing(fields)))
            default: return refused(.invalid("unknown message type \"\(type.prefix(64))\""))
            }
        } catch {
            return refused(error)
        }
    }

    private static func refused(_ error: ClawlineError) -> Result<ClientFrame, FrameRejection> { .failure(.refused(error)) }

    private static func checkProtocolVersion(_ fields: [String: JSONValue]) throws(ClawlineError) {
        guard let version = fields["protocolVersion"] else { throw .invalid("missing protocolVersion", closes: true) }
        guard case .int(let number) = version else { throw .invalid("protocolVersion must be an integer", closes: true) }
        guard number == 1 else { throw .invalid("unsupported protocolVersion \(number)", closes: true) }
    }

    private static func string(_ fields: [String: JSONValue], _ key: String) throws(ClawlineError) -> String {
        guard let value = fields[key]?.stringValue else { throw .invalid("missing or non-string \(key)") }
        return value
    }

    /// The value of `key` unless it is absent or null.
    private static func present(_ fields: [String: JSONValue], _ key: String) -> JSONValue? {
        guard let value = fields[key], !value.isNull else { return nil }
        return value
    }

    private static func pairRequest(_ fields: [String: JSONValue]) throws(ClawlineError) -> PairRequest {
        try checkProtocolVersion(fields)
        let deviceID = try string(fields, "deviceId")
        guard Identifiers.isUUIDv4(deviceID) else { throw .invalid("deviceId must be a UUIDv4") }
        var claimedName: String?
        if let name = present(fields, "claimedName") {
            guard let text = name.stringValue else { throw .invalid("claimedName must be a string") }
            guard text.utf8.count <= maxClaimedNameBytes else { throw .invalid("claimedName is longer than 64 bytes") }
            claimedName = text
        }
        guard case .object(let info) = fields["deviceInfo"] ?? .null else { throw .invalid("deviceInfo must be an object") }
        for key in ["platform", "model"] {
            guard let value = info[key]?.stringValue, !value.isEmpty else { throw .invalid("deviceInfo.\(key) must be a non-empty string") }
        }
        for key in ["osVersion", "appVersion"] {
            if let value = info[key], !value.isNull, value.stringValue == nil { throw .invalid("deviceInfo.\(key) must be a string") }
        }
        return PairRequest(deviceId: deviceID, claimedName: claimedName, deviceInfo: .object(info))
    }

    private static func pairDecision(_ fields: [String: JSONValue]) throws(ClawlineError) -> PairDecision {
        let deviceID = try string(fields, "deviceId")
        guard let approve = fields["approve"]?.boolValue else { throw .invalid("approve must be a boolean") }
        var userID: String?
        if let value = present(fields, "userId") {
            guard let text = value.stringValue, Identifiers.isUUIDv4(text) else { throw .invalid("userId must be a UUIDv4") }
            userID = text
        }
        if approve && userID == nil { throw .invalid("userId is required when approve is true") }
        return PairDecision(deviceId: deviceID, approve: approve, userId: userID)
    }

    private static func auth(_ fields: [String: JSONValue]) throws(ClawlineError) -> Auth {
        try checkProtocolVersion(fields)
        let token = try string(fields, "token")
        let deviceID = try string(fields, "deviceId")
        var cursor: String?
        if let value = present(fields, "lastMessageId") {
            guard let text = value.stringValue else { throw .invalid("lastMessageId must be a string or null") }
            guard !text.allSatisfy(\.isWhitespace) else { throw .invalid("lastMessageId must not be empty") }
            cursor = text
        }
        return Auth(token: token, deviceId: deviceID, lastMessageId: cursor)
    }

    private static func message(_ fields: [String: JSONValue]) throws(ClawlineError) -> Message {
        guard let id = fields["id"]?.stringValue else { throw .invalid("missing message id") }
        guard id.hasPrefix("c_"), id.utf8.count > 2, id.utf8.count <= maxMessageIDBytes else {
            throw .invalid("message id must start with c_", messageId: String(id.prefix(maxMessageIDBytes)))
        }
        guard let content = fields["content"]?.stringValue else { throw .invalid("missing content", messageId: id) }
        guard !content.isEmpty else { throw .invalid("content must not be empty", messageId: id) }
        var attachments: [JSONValue]?
        if let value = present(fields, "attachments") {
            guard let list = value.arrayValue else { throw .invalid("attachments must be an array", messageId: id) }
            attachments = list
        }
        var channel: ClawlineChannel?
        if let value = present(fields, "channelType") {
            guard let name = value.stringValue, let named = ClawlineChannel(rawValue: name) else {
                throw .invalid("channelType must be \"personal\" or \"admin\"", messageId: id)
            }
            channel = named
        }
        return Message(id: id, content: content, attachments: attachments, channelType: channel)
    }

    private static func typing(_ fields: [String: JSONValue]) throws(ClawlineError) -> Typing {
        if fields["role"] != nil { throw .invalid("client typing must not carry role") }
        guard let active = fields["active"]?.boolValue else { throw .invalid("active must be a boolean") }
        return Typing(active: active)
    }
}
