import GatewayWire
import RelayCore

/// `sessions.messages.subscribe` / `unsubscribe` and the `session.message` event: a socket that
/// subscribed to a session sees every message stored in it at once (a message typed on another
/// device, in any protocol, or a run's answer), not only after its next `chat.history`.
extension GatewayDownstream {
    /// Sessions one socket may subscribe to at once.
    static let maxMessageSessions = 64

    func handleSessionMessages(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let params = request.params(as: SessionMessagesParams.self)
        guard let key = params?.key ?? params?.sessionKey, !key.isEmpty else { return socket.fail(request.id, .keyRequired) }
        let subscribing = request.method == "sessions.messages.subscribe"
        // Like `chat.history`, which apps call right after: a new key names a new conversation.
        conversation(named: key, creating: subscribing) { result in
            switch result {
            case .success(let conversation):
                if subscribing {
                    let known = socket.messageSessions.contains(conversation.id)
                    guard known || socket.messageSessions.count < Self.maxMessageSessions else {
                        return socket.fail(request.id, .tooManySubscriptions(max: Self.maxMessageSessions))
                    }
                    socket.messageSessions.insert(conversation.id)
                } else {
                    socket.messageSessions.remove(conversation.id)
                }
                socket.reply(request.id, SessionMessagesSubscription(subscribed: subscribing, key: key))
            case .failure(let error) where !subscribing && error is UnknownSession:
                // Nothing to stop taking.
                socket.reply(request.id, SessionMessagesSubscription(subscribed: false, key: key))
            case .failure(let error):
                socket.fail(request.id, Self.sessionError(error))
            }
        }
    }

    /// The `session.message` payload for a stored message, encoded once for every socket.
    /// A user message is published as it is stored, just before the run it starts is queued:
    /// that run counts as active already.
    func sessionMessagePayload(_ message: ChatEvent) -> String {
        var runs = hub.turns.runs(in: message.conversationID).map(\.turn.runID)
        if message.role == .user, let run = message.turn?.runID, !runs.contains(run) { runs.append(run) }
        return GatewayJSON.encode(
            SessionMessageEvent(
                sessionKey: sessionKey(of: message.conversationID),
                message: Self.chatMessage(message),
                messageId: message.id,
                activeRunIds: runs
            )
        )
    }
}
