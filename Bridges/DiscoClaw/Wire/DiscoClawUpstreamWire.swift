import RelayCore

/// What a DiscoClaw server says to the relay's upstream account, decoded from its JSON: the
/// WebSocket events that carry answers and the REST replies the account reads. Anything the
/// account does not use is left out; anything malformed decodes to nil (or `.other`).
enum DiscoClawUpstreamWire {
    /// A WebSocket event, as far as answers go.
    enum Event: Equatable, Sendable {
        /// A fragment of a running answer (right after the socket opens: all of it so far).
        case delta(messageID: String, text: String, seq: Int64?)
        case complete(messageID: String, content: String, seq: Int64?)
        case error(messageID: String, reason: String)
        /// `tool.*`, `conversation.updated` and whatever a newer server adds.
        case other
    }

    /// A message row (`/sync`), as far as the account needs it.
    struct Message: Equatable, Sendable {
        var id: String
        var status: String
        var content: String
        var error: String?
        var seq: Int64?
    }

    struct SyncPage: Equatable, Sendable {
        var messages: [Message]
        var cursor: Int64?
    }

    /// The `201` of `POST /conversations/:id/messages`.
    struct Posted: Equatable, Sendable {
        var userSeq: Int64?
        var answerID: String
    }

    struct Registration: Equatable, Sendable {
        var userID: String
        var deviceID: String
        var token: String
    }

    /// nil when the frame is not a JSON object.
    static func event(_ bytes: [UInt8]) -> Event? {
        guard let frame = JSONValue.parse(bytes), frame.objectValue != nil else { return nil }
        guard let type = frame["type"]?.stringValue, let id = frame["messageId"]?.stringValue, !id.isEmpty else { return .other }
        switch type {
        case "message.delta":
            guard let text = frame["delta"]?.stringValue else { return .other }
            return .delta(messageID: id, text: text, seq: integer(frame["seq"]))
        case "message.complete":
            guard let content = frame["content"]?.stringValue else { return .other }
            return .complete(messageID: id, content: content, seq: integer(frame["seq"]))
        case "message.error":
            return .error(messageID: id, reason: frame["error"]?.stringValue ?? "the server reported an error without a reason")
        default:
            return .other
        }
    }

    static func syncPage(_ body: JSONValue) -> SyncPage? {
        guard let rows = body["messages"]?.arrayValue else { return nil }
        let messages = rows.compactMap { row -> Message? in
            guard let id = row["id"]?.stringValue, let status = row["status"]?.stringValue else { return nil }
            return Message(
                id: id,
                status: status,
                content: row["content"]?.stringValue ?? "",
                error: row["error"]?.stringValue,
                seq: integer(row["seq"])
            )
        }
        return SyncPage(messages: messages, cursor: integer(body["cursor"]))
    }

    static func posted(_ body: JSONValue) -> Posted? {
        guard let answerID = body["assistantMessageId"]?.stringValue, !answerID.isEmpty else { return nil }
        return Posted(userSeq: integer(body["seq"]), answerID: answerID)
    }

    static func registration(_ body: JSONValue) -> Registration? {
        guard let token = body["token"]?.stringValue, !token.isEmpty, let deviceID = body["deviceId"]?.stringValue else { return nil }
        return Registration(userID: body["userId"]?.stringValue ?? "", deviceID: deviceID, token: token)
    }

    static func conversationID(_ body: JSONValue) -> String? {
        guard let id = body["id"]?.stringValue, !id.isEmpty else { return nil }
        return id
    }

    /// The reason in an error body: `{"error": …}` (auth) or Fastify's `{"message": …}`.
    static func errorText(_ body: JSONValue?) -> String? {
        guard let body else { return nil }
        if let message = body["message"]?.stringValue, !message.isEmpty { return message }
        return body["error"]?.stringValue
    }

    // MARK: Requests

    static func registerBody(setupToken: String) -> JSONValue {
        .object(["name": .string("clawrelay"), "platform": .string("macos"), "setupToken": .string(setupToken)])
    }

    static func conversationBody(title: String?) -> JSONValue {
        .object(title.map { ["title": .string($0)] } ?? [:])
    }

    static func messageBody(content: String, clientID: String) -> JSONValue {
        .object(["content": .string(content), "clientId": .string(clientID)])
    }

    /// A seq or cursor: an integer (the public server's are millisecond clocks; a double is taken too).
    private static func integer(_ value: JSONValue?) -> Int64? {
        switch value {
        case .int(let number)?: number
        case .double(let number)? where number.isFinite && abs(number) < 9e18: Int64(number)
        default: nil
        }
    }
}
