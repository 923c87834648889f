import GatewayWire
import RelayCore
import RelayTransport

/// `chat.send`, `chat.history` and `chat.abort`: a session key names a conversation of the
/// gateway's user, and the core's turns run it.
extension GatewayDownstream {
    /// A chat method's params, read once.
    private enum ChatCall {
        /// With its attachments checked (refused ones answer before any conversation is made).
        case send(ChatSendParams?, ChatAttachments.Checked)
        case abort(ChatAbortParams?)
        case history(ChatHistoryParams?)

        var sessionKey: String? {
            switch self {
            case .send(let params, _): params?.sessionKey
            case .abort(let params): params?.sessionKey
            case .history(let params): params?.sessionKey
            }
        }
    }

    func handleChat(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let call: ChatCall
        switch request.method {
        case "chat.send":
            let params = request.params(as: ChatSendParams.self)
            switch ChatAttachments.check(params?.attachments) {
            case .success(let checked): call = .send(params, checked)
            case .failure(let error): return socket.fail(request.id, error)
            }
        case "chat.abort": call = .abort(request.params(as: ChatAbortParams.self))
        default: call = .history(request.params(as: ChatHistoryParams.self))
        }
        guard let sessionKey = call.sessionKey, !sessionKey.isEmpty else { return socket.fail(request.id, .sessionKeyRequired) }
        if case .send = call, let refusal = Self.routingRefusal(request.fields) { return socket.fail(request.id, refusal) }
        conversation(named: sessionKey, creating: true) { [self] result in
            let conversation: Conversation
            switch result {
            case .success(let found): conversation = found
            case .failure(let error): return socket.fail(request.id, Self.sessionError(error))
            }
            switch call {
            case .send(let params, let attachments): send(params, attachments, request.id, in: conversation, from: socket)
            case .abort(let params):
                let aborted = hub.turns.abort(conversationID: conversation.id, runID: params?.runId)
                socket.reply(request.id, ChatAbortResult(runIds: aborted))
            case .history(let params): history(params, request.id, of: conversation, key: sessionKey, on: socket)
            }
        }
    }

    /// The conversation a session key names (`agent:main:<key>` is `<key>`): `cv:<conversation id>` (any conversation of this
    /// gateway's user, whatever protocol made it), a key the gateway used before, a bare
    /// conversation id, or, when `creating`, a new conversation (`backend:<name>:…` keys bind it
    /// to that backend). Fails with `UnknownSession` when nothing matches (a `cv:` key never
    /// creates; another user's conversation is unknown), and with `UnknownBackend` when nothing
    /// matches a `backend:<name>:…` key whose backend the relay does not have (no conversation
    /// is made that no turn could answer).
    func conversation(named key: String, creating: Bool, completion: @escaping (Result<Conversation, any Error>) -> Void) {
        let sessionKey = Self.routing.canonical(key)
        guard let backend = Self.backendName(in: sessionKey), hub.router.backends[backend] == nil else {
            return existingConversation(named: sessionKey, creating: creating, completion: completion)
        }
        let known = hub.router.backends.keys.sorted()
        existingConversation(named: sessionKey, creating: false) { result in
            guard case .failure(let error) = result, error is UnknownSession else { return completion(result) }
            completion(.failure(UnknownBackend(name: backend, configured: known)))
        }
    }

    private func existingConversation(named sessionKey: String, creating: Bool, completion: @escaping (Result<Conversation, any Error>) -> Void) {
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

    private func send(
        _ params: ChatSendParams?,
        _ attachments: ChatAttachments.Checked,
        _ requestID: String,
        in conversation: Conversation,
        from socket: GatewaySocket
    ) {
        guard let message = params?.message else { return socket.fail(requestID, .messageRequired) }
        let runID = params?.idempotencyKey ?? Identifiers.newUUID()
        // OpenClaw answers `/stop` with the runs it stopped, and keeps it out of the transcript.
        if RelayCommand(message) == .stop {
            let aborted = hub.turns.abort(conversationID: conversation.id)
            return socket.reply(requestID, ChatSendResult(runId: runID, status: "aborted", runIds: aborted))
        }
        var policy = settings.turnPolicy
        if let timeout = params?.timeoutMs, timeout > 0 { policy.inactivityMillis = Int(min(timeout, 3_600_000)) }
        var submitted = UserMessage(
            conversationID: conversation.id,
            userID: settings.userID,
            deviceID: socket.deviceID,
            clientID: runID,
            runID: runID,
            content: message,
            attachmentsHash: attachments.hash
        )
        submitted.attachmentsJSON = attachments.json
        hub.turns.submit(submitted, policy: policy) { outcome in
            let status: String
            switch outcome {
            case .accepted: status = "started"
            case .duplicate(.active, _, _): status = "in_flight"
            case .duplicate(.finalized, _, _): status = "ok"
            case .duplicate(.aborted, _, _): status = "aborted"
            case .duplicate(.failed, _, _): status = "error"
            case .mismatch: return socket.fail(requestID, .idempotencyKeyReused)
            case .queueFull: return socket.fail(requestID, .tooManyQueued)
            case .rejected, .missingAsset, .storeFailed: return socket.fail(requestID, .messageNotStored)
            }
            socket.reply(requestID, ChatSendResult(runId: runID, status: status))
        }
    }

    /// Message text one `chat.history` answer carries at most (always the newest message): the
    /// newest that fit come back. `maxChars` asks for less.
    static let historyBudget = 8 << 20
    /// The most messages `offset` skips (a page further back than this is refused, not scanned).
    static let maxHistoryOffset: Int64 = 100_000

    private func history(_ params: ChatHistoryParams?, _ requestID: String, of conversation: Conversation, key: String, on socket: GatewaySocket) {
        let limit = Int(min(1000, max(1, params?.limit ?? 200)))
        let offset = max(0, params?.offset ?? 0)
        guard offset <= Self.maxHistoryOffset else { return socket.fail(requestID, .offsetTooLarge(max: Self.maxHistoryOffset)) }
        let budget = params?.maxChars.map { Int(min(500_000, max(1, $0))) } ?? Self.historyBudget
        let id = conversation.id
        hub.history.recent(userID: settings.userID, conversationID: id, skipping: Int(offset), limit: limit, byteBudget: budget) { [self] result in
            guard case .success(let window) = result else { return socket.fail(requestID, .sessionUnreadable) }
            // Fetching the newest page is reading it: pushes for what it shows are no longer needed.
            if offset == 0, let newest = window.events.map(\.seq).max() { hub.read(deviceID: socket.deviceID, conversationID: id, seq: newest) }
            let runs = hub.turns.runs(in: id)
            let running = runs.first.flatMap { $0.startedAt > 0 ? $0 : nil }
            socket.reply(
                requestID,
                ChatHistory(
                    sessionKey: key,
                    sessionId: id,
                    messages: window.events.map(Self.chatMessage),
                    hasMore: window.hasMore,
                    nextOffset: window.hasMore ? offset + Int64(window.events.count) : nil,
                    sessionInfo: ChatSessionInfo(key: key, activeRunIds: runs.map(\.turn.runID)),
                    inFlightRun: running.map { InFlightRun(runId: $0.turn.runID, text: $0.content) }
                )
            )
        }
    }

    /// A stored message as `chat.history` and final `chat` events show it; `id` and `seq` (its
    /// place on the user's clock, what `sessions.markRead` takes) are the relay's additions. The
    /// relay's notes are history too: assistant messages marked `note: true` (an OpenClaw app shows
    /// them as the assistant's; its own approval prompt comes from the `*.approval.*` events).
    static func chatMessage(_ event: ChatEvent) -> ChatMessage {
        ChatMessage(
            id: event.id,
            role: event.role.rawValue,
            text: event.content,
            timestamp: event.timestampMillis,
            seq: event.seq,
            note: event.isNote,
            idempotencyKey: event.role == .user ? event.turn?.runID : nil
        )
    }
}
