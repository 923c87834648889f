import Foundation
import GatewayWire
import RelayCore

/// `chat.inject {sessionKey, message, label?}`: an operator adds an assistant note to a session,
/// as OpenClaw's handler does. The core stores it in the conversation's history like the relay's
/// own notes, so every device of every protocol sees it; gateway operators also get the `chat`
/// final OpenClaw sends for it (`runId: "inject-<messageId>"`, `seq: 0`).
extension GatewayDownstream {
    /// OpenClaw's bound on `label`.
    static let maxInjectLabelBytes = 100
    /// The longest note (a chat message's own bound is the frame size; a note is smaller).
    static let maxInjectBytes = 1 << 20

    func inject(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let fields = request.fields
        guard let key = fields["sessionKey"]?.stringValue, !key.isEmpty else { return socket.fail(request.id, .sessionKeyRequired) }
        guard let message = fields["message"]?.stringValue, !message.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            return socket.fail(request.id, .messageRequired)
        }
        guard message.utf8.count <= Self.maxInjectBytes else { return socket.fail(request.id, .tooLarge("message")) }
        var label: String?
        switch fields["label"] {
        case nil, .null?: label = nil
        case .string(let text)?:
            guard text.utf8.count <= Self.maxInjectLabelBytes else {
                return socket.fail(request.id, .labelTooLong(maxBytes: Self.maxInjectLabelBytes))
            }
            label = text.isEmpty ? nil : text
        default: return socket.fail(request.id, .labelNotString)
        }
        let text = label.map { "[\($0)]\n\n" + message } ?? message
        conversation(named: key, creating: false) { [self] result in
            let conversation: Conversation
            switch result {
            case .success(let found): conversation = found
            case .failure(let error): return socket.fail(request.id, Self.sessionError(error))
            }
            hub.note(text, userID: settings.userID, conversationID: conversation.id) { [self] stored in
                guard case .success(let event) = stored else { return socket.fail(request.id, .injectNotStored) }
                socket.reply(request.id, ChatInjectResult(messageId: event.id))
                let final = ChatEventPayload(
                    runId: "inject-" + event.id,
                    sessionKey: sessionKey(of: conversation.id),
                    seq: 0,
                    state: "final",
                    message: Self.chatMessage(event)
                )
                broadcast("chat", final, to: \.readsChat)
            }
        }
    }
}
