import RelayKit

/// A client frame's envelope: `{type, requestId?, data}`, or the app's bare
/// `{type:"client_backgrounding", sessionId, timestamp}` (its fields become `data`).
public struct CompanionRequest: Sendable, Equatable {
    public var type: String
    public var requestID: String?
    public var data: CompanionFields

    public init(type: String, requestID: String? = nil, data: CompanionFields = CompanionFields()) {
        self.type = type
        self.requestID = requestID
        self.data = data
    }

    /// Reads a text frame; what is wrong with it is an `INVALID_MESSAGE`. Never touches a socket.
    public static func parse(_ bytes: [UInt8]) -> Result<CompanionRequest, CompanionError> {
        guard let json = JSONValue.parse(bytes), case .object(let fields) = json else {
            return .failure(.invalid("the frame is not a JSON object"))
        }
        guard let type = fields["type"]?.stringValue, !type.isEmpty else { return .failure(.invalid("type must be a non-empty string")) }
        var requestID: String?
        switch fields["requestId"] {
        case nil, .null?: break
        case .string(let id)? where id.utf8.count <= CompanionLimits.maxRequestIDBytes: requestID = id
        default: return .failure(.invalid("requestId must be a string of at most \(CompanionLimits.maxRequestIDBytes) bytes"))
        }
        var data: [String: JSONValue]
        switch fields["data"] {
        case nil, .null?: data = [:]
        case .object(let object)?: data = object
        default: return .failure(.invalid("data must be an object"))
        }
        // The app backgrounds with its fields at the top level.
        if data.isEmpty, let sessionID = fields["sessionId"] { data["sessionId"] = sessionID }
        return .success(CompanionRequest(type: type, requestID: requestID, data: CompanionFields(data)))
    }
}
