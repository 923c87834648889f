import RelayCore
import RelayStore
import RelayTransport

/// What one socket has been shown of a chat run: its `chat` event seq and the delta throttle.
final class ChatRunView {
    var seq = 0
    var lastDeltaAt: Int64 = 0
    var deltaTimer: TimerID?
    var latest: TurnProgress?
}

extension GatewayDownstream {
    static let deltaIntervalMillis: Int64 = 150
    static let maxQueuedRunsPerDevice = 20

    func handleChat(_ request: GatewayRequest, on session: GatewaySession) {
        let needed = request.method == "chat.send" || request.method == "chat.abort" ? "operator.write" : "operator.read"
        guard session.has(needed) || (needed == "operator.read" && session.has("operator.write")) else {
            return session.fail(request.id, .invalid("missing scope \(needed)"), close: nil)
        }
        if request.method == "sessions.list" { return listSessions(request, on: session) }
        guard let sessionKey = request.string("sessionKey"), !sessionKey.isEmpty else {
            return session.fail(request.id, .invalid("sessionKey required"), close: nil)
        }
        conversation(named: sessionKey) { [self] result in
            guard case .success(let conversation) = result else {
                return session.fail(request.id, GatewayError(code: .unavailable, message: "the session could not be opened"), close: nil)
            }
            switch request.method {
            case "chat.send": send(request, in: conversation, from: session)
            case "chat.abort":
                let aborted = hub.turns.abort(conversationID: conversation.id, runID: request.string("runId"))
                session.send(
                    GatewayFrame.ok(request.id, .object(["ok": .bool(true), "aborted": .bool(!aborted.isEmpty), "runIds": .array(aborted.map(JSONValue.string))])))
            default: history(request, of: conversation, key: sessionKey, on: session)
            }
        }
    }

    /// The conversation a session key names: a key the gateway used before, a conversation id,
    /// or a new conversation (`backend:<name>:…` keys bind it to that backend).
    func conversation(named sessionKey: String, completion: @escaping (Result<Conversation, any Error>) -> Void) {
        let user = settings.userID
        let byKey = { [hub] in
            hub.conversations.resolve(.session(sessionKey), userID: user, draft: ConversationDraft(backend: Self.backendName(in: sessionKey)), completion: completion)
        }
        guard sessionKey.hasPrefix("cv_"), hub.conversations.cached(.session(sessionKey), userID: user) == nil else { return byKey() }
        hub.conversations.load(id: sessionKey) { result in
            if case .success(let found?) = result, found.userID == user { return completion(.success(found)) }
            byKey()
        }
    }

    static func backendName(in sessionKey: String) -> String? {
        let parts = sessionKey.split(separator: ":", maxSplits: 2)
        return parts.count >= 2 && parts[0] == "backend" ? String(parts[1]) : nil
    }

    private func send(_ request: GatewayRequest, in conversation: Conversation, from session: GatewaySession) {
        guard let message = request.string("message") else { return session.fail(request.id, .invalid("message is required"), close: nil) }
        let runID = request.string("idempotencyKey") ?? Identifiers.newUUID()
        if message.trimmingCharacters(in: .whitespaces) == "/stop" {
            let aborted = hub.turns.abort(conversationID: conversation.id)
            return session.send(GatewayFrame.ok(request.id, .object(["runId": .string(runID), "status": .string("aborted"), "runIds": .array(aborted.map(JSONValue.string))])))
        }
        var policy = TurnPolicy(maxQueuedPerDevice: Self.maxQueuedRunsPerDevice, backend: settings.backend)
        if let timeout = request.params["timeoutMs"]?.intValue, timeout > 0 { policy.inactivityMillis = Int(min(timeout, 3_600_000)) }
        let submitted = UserMessage(
            conversationID: conversation.id, userID: settings.userID, deviceID: session.deviceID, clientID: runID, runID: runID, content: message)
        hub.turns.submit(submitted, policy: policy) { outcome in
            let status: String
            switch outcome {
            case .accepted: status = "started"
            case .duplicate(.active, _, _): status = "in_flight"
            case .duplicate(.finalized, _, _): status = "ok"
            case .duplicate(.aborted, _, _): status = "aborted"
            case .duplicate(.failed, _, _): status = "error"
            case .mismatch:
                return session.fail(request.id, .invalid("idempotencyKey reused with a different message"), close: nil)
            case .queueFull:
                return session.fail(request.id, GatewayError(code: .unavailable, message: "too many queued messages", retryable: true), close: nil)
            case .rejected, .missingAsset, .storeFailed:
                return session.fail(request.id, GatewayError(code: .unavailable, message: "the message could not be stored"), close: nil)
            }
            session.send(GatewayFrame.ok(request.id, .object(["runId": .string(runID), "status": .string(status)])))
        }
    }

    private func history(_ request: GatewayRequest, of conversation: Conversation, key: String, on session: GatewaySession) {
        let limit = Int(min(1000, max(1, request.params["limit"]?.intValue ?? 200)))
        let (user, id) = (settings.userID, conversation.id)
        store.perform({ db in try EventQueries.conversation(db, userID: user, conversationID: id, limit: limit) }) { result in
            let messages = ((try? result.get()) ?? []).map(Self.chatMessage)
            session.send(GatewayFrame.ok(request.id, .object(["sessionKey": .string(key), "sessionId": .string(id), "messages": .array(messages)])))
        }
    }

    private func listSessions(_ request: GatewayRequest, on session: GatewaySession) {
        let limit = Int(min(1000, max(1, request.params["limit"]?.intValue ?? 100)))
        let (user, now) = (settings.userID, clock.nowMillis())
        store.perform({ db in
            try ConversationQueries.list(db, userID: user, limit: limit).map { conversation in
                (conversation, conversation.key(in: "session"),
                 try EventQueries.count(db, conversationID: conversation.id))
            }
        }) { result in
            let list = ((try? result.get()) ?? []).map { conversation, key, count in
                JSONValue.object([
                    "key": .string(key ?? conversation.id), "kind": .string("direct"), "updatedAt": .int(conversation.updatedAt),
                    "messageCount": .int(Int64(count)), "displayName": conversation.title.map(JSONValue.string) ?? .null,
                ])
            }
            session.send(GatewayFrame.ok(request.id, .object(["ts": .int(now), "count": .int(Int64(list.count)), "sessions": .array(list)])))
        }
    }

    static func chatMessage(_ event: ChatEvent) -> JSONValue {
        .object([
            "role": .string(event.role.rawValue), "content": .array([.object(["type": .string("text"), "text": .string(event.content)])]),
            "timestamp": .int(event.timestampMillis),
        ])
    }

    // MARK: Core events to operators

    /// A core event for this gateway's user, as `chat` events for operators that may read chat.
    func deliverChat(_ event: BusEvent, to session: GatewaySession) {
        guard !session.isNode, session.has("operator.read") || session.has("operator.write") else { return }
        switch event {
        case .streaming(let progress):
            let view = session.chatRuns[progress.turn.runID] ?? ChatRunView()
            session.chatRuns[progress.turn.runID] = view
            view.latest = progress
            let now = clock.nowMillis()
            if now - view.lastDeltaAt >= Self.deltaIntervalMillis {
                sendDelta(view, to: session)
            } else if view.deltaTimer == nil {
                view.deltaTimer = loop.schedule(afterMillis: Int(Self.deltaIntervalMillis - (now - view.lastDeltaAt))) { [weak self, weak session, weak view] in
                    guard let self, let session, let view else { return }
                    view.deltaTimer = nil
                    sendDelta(view, to: session)
                }
            }
        case .message(let message) where message.role == .assistant:
            guard let turn = message.turn else { return }
            chatEvent(turn.runID, conversationID: message.conversationID, state: "final", message: Self.chatMessage(message), to: session)
        case .turnFailed(let failure):
            let state = failure.cause == .aborted ? "aborted" : "error"
            chatEvent(failure.turn.runID, conversationID: failure.conversationID, state: state, errorMessage: state == "error" ? "the assistant failed to answer" : nil, to: session)
        case .message, .assistantTyping:
            break
        }
    }

    private func sendDelta(_ view: ChatRunView, to session: GatewaySession) {
        guard let progress = view.latest else { return }
        view.lastDeltaAt = clock.nowMillis()
        let message: JSONValue = .object([
            "role": .string("assistant"), "content": .array([.object(["type": .string("text"), "text": .string(progress.content)])]),
            "timestamp": .int(view.lastDeltaAt),
        ])
        chatEvent(progress.turn.runID, conversationID: progress.conversationID, state: "delta", message: message, to: session, ending: false)
    }

    private func chatEvent(
        _ runID: String, conversationID: String, state: String, message: JSONValue? = nil, errorMessage: String? = nil, to session: GatewaySession,
        ending: Bool = true
    ) {
        let view = session.chatRuns[runID] ?? ChatRunView()
        if ending {
            view.deltaTimer.map(loop.cancel)
            session.chatRuns.removeValue(forKey: runID)
        }
        view.seq += 1
        var payload: [String: JSONValue] = [
            "runId": .string(runID), "sessionKey": .string(hub.conversations.key(of: conversationID, scheme: "session") ?? conversationID),
            "seq": .int(Int64(view.seq)), "state": .string(state),
        ]
        if let message { payload["message"] = message }
        if let errorMessage { payload["errorMessage"] = .string(errorMessage) }
        deliver(session.event("chat", .object(payload)), to: session)
    }
}
