import ChatModel
import RelayCore

/// Gateway frames as the chat model's server events.
enum GatewayEvents {
    static func summary(_ session: JSONValue) -> SessionSummary? {
        guard let key = session["key"]?.stringValue else { return nil }
        // A `backend:NAME:rest` session is best called `rest` (the gateway names it by its key).
        let named = session["displayName"]?.stringValue
        let displayName = named == key && backend(inKey: key) != nil ? String(key.split(separator: ":", maxSplits: 2)[2]) : named
        return SessionSummary(
            key: key,
            displayName: displayName,
            backend: session["backend"]?.stringValue ?? backend(inKey: key),
            unreadCount: session["unreadCount"]?.intValue.map(Int.init),
            lastReadSeq: session["lastReadSeq"]?.intValue,
            updatedAt: session["updatedAt"]?.intValue ?? 0,
            preview: session["lastMessagePreview"]?.stringValue
        )
    }

    static func update(_ session: JSONValue) -> SessionUpdate? {
        guard let summary = summary(session) else { return nil }
        return SessionUpdate(
            key: summary.key,
            displayName: summary.displayName,
            backend: summary.backend,
            unreadCount: summary.unreadCount,
            lastReadSeq: summary.lastReadSeq,
            updatedAt: summary.updatedAt == 0 ? nil : summary.updatedAt,
            preview: summary.preview
        )
    }

    /// `backend:NAME:…` keys name their backend (a real gateway's list has no backend field).
    static func backend(inKey key: String) -> String? {
        let parts = key.split(separator: ":", maxSplits: 2)
        return parts.count == 3 && parts[0] == "backend" ? String(parts[1]) : nil
    }

    /// A `chat.history` or `chat` event message.
    static func message(_ value: JSONValue, fallbackID: String, now: Int64) -> ChatMessage {
        let text = value["content"]?.arrayValue?.compactMap { $0["text"]?.stringValue }.joined() ?? value["content"]?.stringValue ?? ""
        let role: ChatModel.ChatRole = value["role"]?.stringValue == "user" ? .user : .assistant
        return ChatMessage(
            id: value["id"]?.stringValue ?? fallbackID,
            seq: value["seq"]?.intValue,
            role: role,
            text: text,
            timestamp: value["timestamp"]?.intValue ?? now
        )
    }

    /// A `chat` event of a run this client did not start (another device's, or after a reconnect).
    static func chat(_ payload: JSONValue, now: Int64) -> ServerEvent? {
        guard let key = payload["sessionKey"]?.stringValue else { return nil }
        let runID = payload["runId"]?.stringValue ?? "run"
        let message = payload["message"] ?? .null
        switch payload["state"]?.stringValue {
        case "delta":
            let whole = GatewayEvents.message(message, fallbackID: runID, now: now)
            return .streaming(key: key, id: whole.id, text: whole.text)
        case "final":
            return .final(key: key, GatewayEvents.message(message, fallbackID: runID, now: now))
        case "error", "aborted":
            return .error(key: key, message: payload["errorMessage"]?.stringValue ?? "the answer was \(payload["state"]?.stringValue ?? "lost")")
        default:
            return nil
        }
    }
}
