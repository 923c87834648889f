import GatewayClient
import GatewayWire
import RelayCore

/// The turns of one operator account: a `chat.send` per turn (its run id the idempotency key),
/// the gateway's `chat` events back to the turn, and every turn failed when the link drops.
///
/// - Important: loop thread only.
final class GatewayAccountTurns: UpstreamTurns {
    private struct Run {
        var sessionKey: String
        var events: @Sendable (TurnEvent) -> Void
    }

    let link: GatewayLink
    private let sessionKey: String?
    private var runs: [String: Run] = [:]

    init(link: GatewayLink, sessionKey: String?) {
        self.link = link
        self.sessionKey = sessionKey
        link.onEvent = { [weak self] event in
            guard event.event == "chat", let payload = event.payload.flatMap({ GatewayJSON.decode(ChatEventPayload.self, from: $0) }) else { return }
            self?.chatEvent(payload)
        }
        link.onDown = { [weak self] in
            guard let self else { return }
            for (_, run) in runs { run.events(.failed("the link to \(link.name) dropped")) }
            runs.removeAll()
        }
    }

    func start(_ turn: TurnRequest, id runID: String, events: @escaping @Sendable (TurnEvent) -> Void) {
        guard link.isReady else { return events(.failed("the link to \(link.name) is \(link.state.rawValue)")) }
        let key = sessionKey ?? "relay:\(turn.userID):\(turn.conversationID)"
        runs[runID] = Run(sessionKey: key, events: events)
        events(.typing(true))
        var params = ChatSendParams(sessionKey: key, message: turn.text, idempotencyKey: runID)
        let attachments = GatewayAccount.attachments(of: turn)
        params.attachments = attachments.isEmpty ? nil : attachments
        link.request("chat.send", params) { [weak self] response in
            guard let self, !response.ok, let run = runs.removeValue(forKey: runID) else { return }
            run.events(.failed(response.error.flatMap { $0.message.isEmpty ? nil : $0.message } ?? "chat.send refused"))
        }
    }

    /// Resets the fixed upstream session, when the account has one (per-conversation sessions
    /// need nothing: a reset conversation has a new id).
    func reset(reason: String) {
        guard let sessionKey, link.isReady else { return }
        link.request("sessions.reset", JSONValue.object(["key": .string(sessionKey), "reason": .string(reason)])) { _ in }
    }

    func cancel(_ runID: String) {
        guard let run = runs.removeValue(forKey: runID), link.isReady else { return }
        link.request("chat.abort", ChatAbortParams(sessionKey: run.sessionKey, runId: runID)) { _ in }
    }

    private func chatEvent(_ payload: ChatEventPayload) {
        guard let runID = payload.runId, let run = runs[runID] else { return }
        let text = payload.message?.text ?? ""
        switch payload.state {
        case "delta": run.events(.progress(text))
        case "final":
            runs.removeValue(forKey: runID)
            run.events(.final(text))
        case "error":
            runs.removeValue(forKey: runID)
            run.events(.failed(payload.errorMessage ?? "upstream error"))
        case "aborted":
            runs.removeValue(forKey: runID)
            run.events(.failed("aborted upstream"))
        default: break
        }
    }
}
