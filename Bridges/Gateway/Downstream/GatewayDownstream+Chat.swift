import RelayCore
import RelayTransport

extension GatewayDownstream {
    static let maxQueuedRunsPerDevice = 20

    func handleChat(_ request: GatewayRequest, on session: GatewaySession) {
        let needed = request.method == "chat.send" || request.method == "chat.abort" ? "operator.write" : "operator.read"
        guard session.has(needed) || (needed == "operator.read" && session.has("operator.write")) else {
            return session.fail(request.id, .invalid("missing scope \(needed)"), close: nil)
        }
        guard let sessionKey = request.string("sessionKey"), !sessionKey.isEmpty else {
            return session.fail(request.id, .invalid("sessionKey required"), close: nil)
        }
        conversation(named: sessionKey, creating: true) { [self] result in
            let conversation: Conversation
            switch result {
            case .success(let found): conversation = found
            case .failure(let error): return session.fail(request.id, Self.sessionError(error), close: nil)
            }
            switch request.method {
            case "chat.send": send(request, in: conversation, from: session)
            case "chat.abort":
                let aborted = hub.turns.abort(conversationID: conversation.id, runID: request.string("runId"))
                session.send(
                    GatewayFrame.ok(
                        request.id,
                        .object(["ok": .bool(true), "aborted": .bool(!aborted.isEmpty), "runIds": .array(aborted.map(JSONValue.string))])
                    )
                )
            default: history(request, of: conversation, key: sessionKey, on: session)
            }
        }
    }

    /// The conversation a session key names: `cv:<conversation id>` (any conversation of this
    /// gateway's user, whatever protocol made it), a key the gateway used before, a bare
    /// conversation id, or, when `creating`, a new conversation (`backend:<name>:…` keys bind it
    /// to that backend). Fails with `UnknownSession` when nothing matches (a `cv:` key never
    /// creates; another user's conversation is unknown).
    func conversation(named sessionKey: String, creating: Bool, completion: @escaping (Result<Conversation, any Error>) -> Void) {
        let user = settings.userID
        if let id = SessionListing.conversationID(inKey: sessionKey) {
            return hub.conversations.load(id: id) { result in
                switch result {
                case .success(let found?) where found.userID == user: completion(.success(found))
                case .success: completion(.failure(UnknownSession()))
                case .failure(let error): completion(.failure(error))
                }
            }
        }
        let byKey = { [hub] in
            guard creating else {
                return hub.conversations.find(.session(sessionKey), userID: user) { result in
                    completion(result.flatMap { $0.map { .success($0) } ?? .failure(UnknownSession()) })
                }
            }
            hub.conversations.resolve(
                .session(sessionKey),
                userID: user,
                draft: ConversationDraft(backend: Self.backendName(in: sessionKey)),
                completion: completion
            )
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
            return session.send(
                GatewayFrame.ok(
                    request.id,
                    .object(["runId": .string(runID), "status": .string("aborted"), "runIds": .array(aborted.map(JSONValue.string))])
                )
            )
        }
        var policy = TurnPolicy(maxQueuedPerDevice: Self.maxQueuedRunsPerDevice, backend: settings.backend)
        if let timeout = request.params["timeoutMs"]?.intValue, timeout > 0 { policy.inactivityMillis = Int(min(timeout, 3_600_000)) }
        let submitted = UserMessage(
            conversationID: conversation.id,
            userID: settings.userID,
            deviceID: session.deviceID,
            clientID: runID,
            runID: runID,
            content: message
        )
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

    /// Message text one `chat.history` answer carries at most (always the newest message): the
    /// newest that fit come back.
    static let historyBudget = 8 << 20

    private func history(_ request: GatewayRequest, of conversation: Conversation, key: String, on session: GatewaySession) {
        let limit = Int(min(1000, max(1, request.params["limit"]?.intValue ?? 200)))
        let id = conversation.id
        hub.history.recent(userID: settings.userID, conversationID: id, limit: limit, byteBudget: Self.historyBudget) { [hub] result in
            let events = (try? result.get()) ?? []
            // Fetching the history is reading it: pushes for what it shows are no longer needed.
            if let newest = events.map(\.seq).max() { hub.read(deviceID: session.deviceID, conversationID: id, seq: newest) }
            let messages = events.map(Self.chatMessage)
            session.send(
                GatewayFrame.ok(request.id, .object(["sessionKey": .string(key), "sessionId": .string(id), "messages": .array(messages)]))
            )
        }
    }

    /// A stored message as `chat.history` and final `chat` events show it; `id` and `seq` (its
    /// place on the user's clock, what `sessions.markRead` takes) are the relay's additions.
    static func chatMessage(_ event: ChatEvent) -> JSONValue {
        .object([
            "role": .string(event.role.rawValue), "content": .array([.object(["type": .string("text"), "text": .string(event.content)])]),
            "timestamp": .int(event.timestampMillis), "id": .string(event.id), "seq": .int(event.seq),
        ])
    }
}
