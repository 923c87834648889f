import ChatModel
import GatewayWire
import RelayKit

/// Gateway frames as the chat model's server events.
enum GatewayEvents {
    static func summary(_ value: JSONValue) -> SessionSummary? {
        GatewayJSON.decode(SessionEntry.self, from: value).map(summary)
    }

    static func summary(_ session: SessionEntry) -> SessionSummary {
        let key = session.key
        // A `backend:NAME:rest` session is best called `rest` (the gateway names it by its key).
        let named = session.displayName
        let displayName = named == key && backend(inKey: key) != nil ? String(key.split(separator: ":", maxSplits: 2)[2]) : named
        return SessionSummary(
            key: key,
            displayName: displayName,
            backend: session.backend ?? backend(inKey: key),
            unreadCount: session.unreadCount.map(Int.init),
            lastReadSeq: session.lastReadSeq,
            updatedAt: session.updatedAt ?? 0,
            preview: session.lastMessagePreview
        )
    }

    static func update(_ value: JSONValue) -> SessionUpdate? {
        guard let summary = summary(value) else { return nil }
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

    /// A `chat.history` or `chat` event message; the relay's notes (`note: true`) are the client's system lines.
    static func message(_ message: GatewayWire.ChatMessage?, fallbackID: String, now: Int64) -> ChatModel.ChatMessage {
        ChatModel.ChatMessage(
            id: message?.id ?? fallbackID,
            seq: message?.seq,
            role: message?.note == true ? .system : message?.role == "user" ? .user : .assistant,
            text: message?.text ?? "",
            timestamp: message?.timestamp ?? now
        )
    }

    /// A `chat` event of a run this client did not start (another device's, or after a reconnect).
    static func chat(_ value: JSONValue, now: Int64) -> ServerEvent? {
        guard let payload = GatewayJSON.decode(ChatEventPayload.self, from: value), let key = payload.sessionKey else { return nil }
        let runID = payload.runId ?? "run"
        switch payload.state {
        case "delta":
            let whole = message(payload.message, fallbackID: runID, now: now)
            return .streaming(key: key, id: whole.id, text: whole.text)
        case "final":
            return .final(key: key, message(payload.message, fallbackID: runID, now: now))
        case "error", "aborted":
            return .error(key: key, message: payload.errorMessage ?? "the answer was \(payload.state ?? "lost")")
        default:
            return nil
        }
    }
}
