import GatewayWire
import RelayCore
import RelayTransport

extension GatewayDownstream {
    static let deltaIntervalMillis: Int64 = 150

    /// A core event for this gateway's user, as a `chat` event for an operator that may read chat.
    /// The first socket handed an event builds the payload (and runs the delta throttle) and sends
    /// the event's `agent` frames to every reader; the others reuse the payload.
    func deliverChat(_ event: BusEvent, to socket: GatewaySocket) {
        guard socket.readsChat else { return }
        let payload: String?
        if let cached = chatRuns.last, cached.event == event {
            payload = cached.payload
        } else {
            emitAgentFrames(for: event)
            payload = chatPayload(for: event)
            chatRuns.last = (event, payload)
            chatRuns.lastSessionMessage = nil
            // A new message changes its conversation's entry (preview, unread count).
            if case .message(let message) = event { sessionChanged(message.conversationID, reason: "send") }
        }
        if let payload { deliver(socket.event("chat", payloadJSON: payload), to: socket) }
        if case .message(let message) = event, socket.messageSessions.contains(message.conversationID) {
            let sessionMessage = chatRuns.lastSessionMessage ?? sessionMessagePayload(message)
            chatRuns.lastSessionMessage = sessionMessage
            deliver(socket.event("session.message", payloadJSON: sessionMessage), to: socket)
        }
    }

    /// The encoded `chat` payload for an event, or nil when there is nothing to show now (a delta
    /// the throttle holds back; its timer sends it to every operator later).
    private func chatPayload(for event: BusEvent) -> String? {
        switch event {
        case .streaming(let progress):
            let view = chatRuns.view(progress.turn.runID)
            view.latest = progress
            let now = clock.nowMillis()
            if now - view.lastDeltaAt >= Self.deltaIntervalMillis { return delta(view) }
            if view.deltaTimer == nil {
                view.deltaTimer = loop.schedule(afterMillis: Int(Self.deltaIntervalMillis - (now - view.lastDeltaAt))) { [weak self, weak view] in
                    guard let self, let view else { return }
                    view.deltaTimer = nil
                    guard let payload = delta(view) else { return }
                    broadcast("chat", payloadJSON: payload, to: \.readsChat)
                }
            }
            return nil
        case .message(let message) where message.role == .assistant:
            // The relay's notes (an approval asked or answered) belong to no run: never a `chat`
            // final (an app would take it as a run's answer); operators read them in `chat.history`.
            guard let turn = message.turn, !message.isNote else { return nil }
            return chatPayload(turn.runID, conversationID: message.conversationID, state: "final", message: Self.chatMessage(message))
        case .turnFailed(let failure):
            let aborted = failure.cause == .aborted
            return chatPayload(
                failure.turn.runID,
                conversationID: failure.conversationID,
                state: aborted ? "aborted" : "error",
                errorMessage: aborted ? nil : failure.shown
            )
        case .message, .assistantTyping, .status, .approval, .tool:
            // Tools are `agent` events; approvals are `*.approval.*` events (from the core's
            // observer); a status line has no place in OpenClaw's chat states.
            return nil
        }
    }

    /// The key `sessions.list` shows for a conversation (`cv:<id>` when it has no session key).
    func sessionKey(of conversationID: String) -> String {
        hub.conversations.key(of: conversationID, scheme: "session") ?? SessionListing.conversationPrefix + conversationID
    }

    private func delta(_ view: ChatRunView) -> String? {
        guard let progress = view.latest else { return nil }
        view.lastDeltaAt = clock.nowMillis()
        if let run = chatRuns.agents[progress.turn.runID] { emitAssistantText(progress.content, of: run, runID: progress.turn.runID) }
        // `id` is the one the final message will have, so a client updates one line in place.
        let message = ChatMessage(id: progress.eventID, role: "assistant", text: progress.content, timestamp: view.lastDeltaAt)
        // v4 clients append `deltaText` (or replace their buffer with it); `message` stays the whole text.
        let appended = progress.content.hasPrefix(view.shown)
        let deltaText = appended ? String(progress.content.dropFirst(view.shown.count)) : progress.content
        view.shown = progress.content
        return chatPayload(progress.turn.runID, conversationID: progress.conversationID, state: "delta", message: message, ending: false) {
            $0.deltaText = deltaText
            $0.replace = appended ? nil : true
        }
    }

    private func chatPayload(
        _ runID: String,
        conversationID: String,
        state: String,
        message: ChatMessage? = nil,
        errorMessage: String? = nil,
        ending: Bool = true,
        adding extra: (inout ChatEventPayload) -> Void = { _ in }
    ) -> String {
        let view = chatRuns.view(runID)
        if ending {
            view.deltaTimer.map(loop.cancel)
            chatRuns.views.removeValue(forKey: runID)
        }
        view.seq += 1
        var payload = ChatEventPayload(
            runId: runID,
            sessionKey: sessionKey(of: conversationID),
            seq: view.seq,
            state: state,
            message: message,
            errorMessage: errorMessage
        )
        extra(&payload)
        return GatewayJSON.encode(payload)
    }
}
