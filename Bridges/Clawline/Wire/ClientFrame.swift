import RelayCore

/// A client → server frame that passed schema validation.
enum ClientFrame: Equatable {
    struct PairRequest: Equatable {
        var deviceID: String
        var claimedName: String?
        var deviceInfo: JSONValue
    }

    struct ChatMessage: Equatable {
        var clientID: String
        var content: String
        /// The attachments exactly as sent; validated after the duplicate check.
        var attachments: [JSONValue]
        var channel = ClawlineChannel.personal
    }

    case pairRequest(PairRequest)
    case pairDecision(deviceID: String, approve: Bool, userID: String?)
    case auth(token: String, deviceID: String, lastMessageID: String?)
    case message(ChatMessage)
    case typing(active: Bool)
}

/// Why a frame was refused, and what the socket should do.
struct FrameRejection: Error, Equatable, Sendable {
    enum Action: Equatable {
        /// Close with 1002 and send nothing (malformed JSON).
        case closeSilently
        case error(ClawlineErrorCode, close: Bool)
    }

    var action: Action
    var message: String
    var messageID: String?

    static func invalid(_ message: String, close: Bool = false, messageID: String? = nil) -> FrameRejection {
        FrameRejection(action: .error(.invalidMessage, close: close), message: message, messageID: messageID)
    }
}

/// Turns a text frame into a `ClientFrame`; pure, so every rule of the schema is unit-testable.
enum ClientFrameDecoder {
    static let maxClaimedNameBytes = 64

    static func decode(_ text: String) -> Result<ClientFrame, FrameRejection> {
        guard let json = JSONValue.parse(text) else {
            return .failure(FrameRejection(action: .closeSilently, message: "malformed JSON"))
        }
        guard case .object(let fields) = json else { return .failure(.invalid("frame must be a JSON object")) }
        guard let type = fields["type"]?.stringValue else { return .failure(.invalid("missing type")) }
        do {
            switch type {
            case "pair_request": return .success(try pairRequest(fields))
            case "pair_decision": return .success(try pairDecision(fields))
            case "auth": return .success(try auth(fields))
            case "message": return .success(try message(fields))
            case "typing": return .success(try typing(fields))
            default: return .failure(.invalid("unknown message type \"\(type.prefix(64))\""))
            }
        } catch let rejection as FrameRejection {
            return .failure(rejection)
        } catch {
            return .failure(.invalid("\(error)"))
        }
    }

    private static func checkProtocolVersion(_ fields: [String: JSONValue]) throws {
        guard let version = fields["protocolVersion"] else { throw FrameRejection.invalid("missing protocolVersion", close: true) }
        guard case .int(let number) = version else { throw FrameRejection.invalid("protocolVersion must be an integer", close: true) }
        guard number == 1 else { throw FrameRejection.invalid("unsupported protocolVersion \(number)", close: true) }
    }

    private static func string(_ fields: [String: JSONValue], _ key: String) throws -> String {
        guard let value = fields[key]?.stringValue else { throw FrameRejection.invalid("missing or non-string \(key)") }
        return value
    }

    private static func pairRequest(_ fields: [String: JSONValue]) throws -> ClientFrame {
        try checkProtocolVersion(fields)
        let deviceID = try string(fields, "deviceId")
        guard Identifiers.isUUIDv4(deviceID) else { throw FrameRejection.invalid("deviceId must be a UUIDv4") }
        var claimedName: String?
        if let name = fields["claimedName"], !name.isNull {
            guard let text = name.stringValue else { throw FrameRejection.invalid("claimedName must be a string") }
            guard text.utf8.count <= maxClaimedNameBytes else { throw FrameRejection.invalid("claimedName is longer than 64 bytes") }
            claimedName = text
        }
        guard case .object(let info) = fields["deviceInfo"] ?? .null else { throw FrameRejection.invalid("deviceInfo must be an object") }
        for key in ["platform", "model"] {
            guard let value = info[key]?.stringValue, !value.isEmpty else {
                throw FrameRejection.invalid("deviceInfo.\(key) must be a non-empty string")
            }
        }
        for key in ["osVersion", "appVersion"] {
            if let value = info[key], !value.isNull, value.stringValue == nil {
                throw FrameRejection.invalid("deviceInfo.\(key) must be a string")
            }
        }
        return .pairRequest(ClientFrame.PairRequest(deviceID: deviceID, claimedName: claimedName, deviceInfo: .object(info)))
    }

    private static func pairDecision(_ fields: [String: JSONValue]) throws -> ClientFrame {
        let deviceID = try string(fields, "deviceId")
        guard let approve = fields["approve"]?.boolValue else { throw FrameRejection.invalid("approve must be a boolean") }
        var userID: String?
        if let value = fields["userId"], !value.isNull {
            guard let text = value.stringValue, Identifiers.isUUIDv4(text) else { throw FrameRejection.invalid("userId must be a UUIDv4") }
            userID = text
        }
        if approve && userID == nil { throw FrameRejection.invalid("userId is required when approve is true") }
        return .pairDecision(deviceID: deviceID, approve: approve, userID: userID)
    }

    private static func auth(_ fields: [String: JSONValue]) throws -> ClientFrame {
        try checkProtocolVersion(fields)
        let token = try string(fields, "token")
        let deviceID = try string(fields, "deviceId")
        var cursor: String?
        if let value = fields["lastMessageId"], !value.isNull {
            guard let text = value.stringValue else { throw FrameRejection.invalid("lastMessageId must be a string or null") }
            guard !text.allSatisfy(\.isWhitespace) else { throw FrameRejection.invalid("lastMessageId must not be empty") }
            cursor = text
        }
        return .auth(token: token, deviceID: deviceID, lastMessageID: cursor)
    }

    private static func message(_ fields: [String: JSONValue]) throws -> ClientFrame {
        guard let id = fields["id"]?.stringValue else { throw FrameRejection.invalid("missing message id") }
        guard id.hasPrefix("c_"), id.utf8.count > 2, id.utf8.count <= 128 else {
            throw FrameRejection.invalid("message id must start with c_", messageID: String(id.prefix(128)))
        }
        guard let content = fields["content"]?.stringValue else { throw FrameRejection.invalid("missing content", messageID: id) }
        guard !content.isEmpty else { throw FrameRejection.invalid("content must not be empty", messageID: id) }
        var attachments: [JSONValue] = []
        if let value = fields["attachments"], !value.isNull {
            guard let list = value.arrayValue else { throw FrameRejection.invalid("attachments must be an array", messageID: id) }
            attachments = list
        }
        var channel = ClawlineChannel.personal
        if let value = fields["channelType"], !value.isNull {
            guard let name = value.stringValue, let named = ClawlineChannel(rawValue: name) else {
                throw FrameRejection.invalid("channelType must be \"personal\" or \"admin\"", messageID: id)
            }
            channel = named
        }
        return .message(ClientFrame.ChatMessage(clientID: id, content: content, attachments: attachments, channel: channel))
    }

    private static func typing(_ fields: [String: JSONValue]) throws -> ClientFrame {
        if fields["role"] != nil { throw FrameRejection.invalid("client typing must not carry role") }
        guard let active = fields["active"]?.boolValue else { throw FrameRejection.invalid("active must be a boolean") }
        return .typing(active: active)
    }
}
