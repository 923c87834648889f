import RelayCore
import RelayTransport

/// A chat run as operators are shown it: its `chat` event count and the delta throttle. One per
/// run, shared by every operator socket, so each event is built and encoded once.
final class ChatRunView {
    var seq = 0
    var lastDeltaAt: Int64 = 0
    var deltaTimer: TimerID?
    var latest: TurnProgress?
    /// The text the last delta showed, for v4's `deltaText`.
    var shown = ""
}

extension GatewayDownstream {
    static let deltaIntervalMillis: Int64 = 150

    /// Operators that may read chat.
    static func readsChat(_ session: GatewaySession) -> Bool { !session.isNode && (session.has("operator.read") || session.has("operator.write")) }

    /// A core event for this gateway's user, as a `chat` event for an operator that may read chat.
    /// The bus hands the same event to every socket in turn: the first one builds the payload
    /// (and runs the delta throttle); the others reuse it.
    func deliverChat(_ event: BusEvent, to session: GatewaySession) {
        guard Self.readsChat(session) else { return }
        let payload: String?
        if let cached = lastChat, cached.event == event {
            payload = cached.payload
        } else {
            payload = chatPayload(for: event)
            lastChat = (event, payload)
            // A new message changes its conversation's entry (preview, unread count).
            if case .message(let message) = event { sessionChanged(message.conversationID) }
        }
        if let payload { deliver(session.event("chat", payloadJSON: payload), to: session) }
    }

    /// The encoded `chat` payload for an event, or nil when there is nothing to show now (a delta
    /// the throttle holds back; its timer sends it to every operator later).
    private func chatPayload(for event: BusEvent) -> String? {
        switch event {
        case .streaming(let progress):
            let view = runView(progress.turn.runID)
            view.latest = progress
            let now = clock.nowMillis()
            if now - view.lastDeltaAt >= Self.deltaIntervalMillis { return delta(view) }
            if view.deltaTimer == nil {
                view.deltaTimer = loop.schedule(afterMillis: Int(Self.deltaIntervalMillis - (now - view.lastDeltaAt))) { [weak self, weak view] in
                    guard let self, let view,
                        let payload = {
                            view.deltaTimer = nil
                            return self.delta(view)
                        }()
                    else { return }
                    for session in sessions.values where session.isConnected && Self.readsChat(session) {
                        deliver(session.event("chat", payloadJSON: payload), to: session)
                    }
                }
            }
            return nil
        case .message(let message) where message.role == .assistant:
            guard let turn = message.turn else { return nil }
            return chatPayload(turn.runID, conversationID: message.conversationID, state: "final", message: Self.chatMessage(message))
        case .turnFailed(let failure):
            let state = failure.cause == .aborted ? "aborted" : "error"
            return chatPayload(
                failure.turn.runID,
                conversationID: failure.conversationID,
                state: state,
                errorMessage: state == "error" ? "the assistant failed to answer" : nil
            )
        case .message, .assistantTyping:
            return nil
        case .tool:
            // The protocol docs give no concrete shape for an operator's tool events: none are sent.
            return nil
        }
    }

    /// The key `sessions.list` shows for a conversation (`cv:<id>` when it has no session key).
    func sessionKey(of conversationID: String) -> String {
        hub.conversations.key(of: conversationID, scheme: "session") ?? SessionListing.conversationPrefix + conversationID
    }

    private func runView(_ runID: String) -> ChatRunView {
        if let view = chatRuns[runID] { return view }
        let view = ChatRunView()
        chatRuns[runID] = view
        return view
    }

    private func delta(_ view: ChatRunView) -> String? {
        guard let progress = view.latest else { return nil }
        view.lastDeltaAt = clock.nowMillis()
        // `id` is the one the final message will have, so a client updates one line in place.
        let message: JSONValue = .object([
            "id": .string(progress.eventID), "role": .string("assistant"),
            "content": .array([.object(["type": .string("text"), "text": .string(progress.content)])]), "timestamp": .int(view.lastDeltaAt),
        ])
        // v4 clients append `deltaText` (or replace their buffer with it); `message` stays the whole text.
        var extra: [String: JSONValue] = [:]
        if progress.content.hasPrefix(view.shown) {
            extra["deltaText"] = .string(String(progress.content.dropFirst(view.shown.count)))
        } else {
            extra = ["deltaText": .string(progress.content), "replace": .bool(true)]
        }
        view.shown = progress.content
        return chatPayload(
            progress.turn.runID,
            conversationID: progress.conversationID,
            state: "delta",
            message: message,
            extra: extra,
            ending: false
        )
    }

    private func chatPayload(
        _ runID: String,
        conversationID: String,
        state: String,
        message: JSONValue? = nil,
        errorMessage: String? = nil,
        extra: [String: JSONValue] = [:],
        ending: Bool = true
    ) -> String {
        let view = runView(runID)
        if ending {
            view.deltaTimer.map(loop.cancel)
            chatRuns.removeValue(forKey: runID)
        }
        view.seq += 1
        var payload: [String: JSONValue] = [
            "runId": .string(runID), "sessionKey": .string(sessionKey(of: conversationID)),
            "seq": .int(Int64(view.seq)), "state": .string(state),
        ]
        if let message { payload["message"] = message }
        if let errorMessage { payload["errorMessage"] = .string(errorMessage) }
        payload.merge(extra) { _, new in new }
        return JSONValue.object(payload).encoded()
    }
}
