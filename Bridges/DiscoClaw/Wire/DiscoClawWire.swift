import RelayCore
import RelayTransport

/// DiscoClaw's JSON shapes, as the real Swift client decodes them: every `*At` is integer
/// milliseconds, roles are `user`/`assistant`, statuses `pending`/`streaming`/`complete`/`error`.
enum DiscoClawWire {
    static func conversation(_ conversation: Conversation, lastMessage: ChatEvent? = nil) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(conversation.id), "title": conversation.title.map(JSONValue.string) ?? .null, "createdAt": .int(conversation.createdAt),
            "updatedAt": .int(conversation.updatedAt), "isProtected": .bool(false),
        ]
        if let archivedAt = conversation.archivedAt ?? (conversation.archived ? conversation.updatedAt : nil) {
            fields["archivedAt"] = .int(archivedAt)
        }
        if let backend = conversation.backend { fields["backend"] = .string(backend) }
        if let last = lastMessage {
            fields["lastMessage"] = .object([
                "role": .string(last.role.rawValue), "content": .string(last.content), "createdAt": .int(last.timestampMillis),
            ])
        }
        return .object(fields)
    }

    static func message(_ entry: TimelineEntry) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(entry.id), "conversationId": .string(entry.conversationID), "role": .string(entry.role.rawValue),
            "content": .string(entry.content), "status": .string(entry.status.rawValue), "seq": .int(entry.seq), "createdAt": .int(entry.createdAt),
        ]
        if let clientID = entry.clientID, !clientID.hasPrefix(unnamedPrefix) { fields["clientId"] = .string(clientID) }
        if let error = entry.error { fields["error"] = .string(error) }
        if let completedAt = entry.completedAt { fields["completedAt"] = .int(completedAt) }
        return .object(fields)
    }

    /// A message posted without a `clientId` still needs one inside the relay (idempotency is keyed
    /// by it); this prefix marks the invented ones, which clients never see.
    static let unnamedPrefix = "relay-unnamed:"

    static func unnamedClientID() -> String { unnamedPrefix + Identifiers.newUUID() }

    static func event(_ type: String, _ fields: [String: JSONValue]) -> String {
        var all = fields
        all["type"] = .string(type)
        return JSONValue.object(all).encoded()
    }

    static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse { .json(status, value.encoded()) }

    /// Fastify's error shape, which the public server answers with.
    static func failure(_ status: Int, _ error: String, _ message: String) -> HTTPResponse {
        json(status, .object(["statusCode": .int(Int64(status)), "error": .string(error), "message": .string(message)]))
    }

    static let notFound = failure(404, "Not Found", "Not Found")

    static func badRequest(_ message: String) -> HTTPResponse { failure(400, "Bad Request", message) }

    /// `{"error": …}`: the shape of auth errors (every value a string: the app decodes `[String: String]`).
    static func error(_ status: Int, _ message: String) -> HTTPResponse { json(status, .object(["error": .string(message)])) }

    static let noContent = HTTPResponse(status: 204, body: .bytes([]))
}
