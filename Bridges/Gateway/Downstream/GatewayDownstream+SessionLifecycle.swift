import GatewayWire
import RelayCore

/// `sessions.reset`, `sessions.create`, `sessions.delete` and `sessions.compact`, in OpenClaw's
/// shapes; the core does the work (`Turns.reset`, `Conversations.delete`/`detach`, a `/compact`
/// turn), so a reset or a deletion from any protocol looks the same here.
extension GatewayDownstream {
    /// `{key, reason?}`: a fresh session for the key (the old one archived with its history).
    func resetSession(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let params: SessionsResetParams
        switch SessionsResetParams.parse(request.fields) {
        case .success(let parsed): params = parsed
        case .failure(let error): return socket.fail(request.id, error)
        }
        withConversation(params.key, creating: true, request, on: socket) { [self] conversation in
            if let expected = params.expectedSessionId, expected != conversation.id { return socket.fail(request.id, .sessionChanged(params.key)) }
            let reason = ResetReason(rawValue: params.reason) ?? .reset
            hub.turns.reset(conversationID: conversation.id, reason: reason, policy: settings.turnPolicy) { [self] result in
                guard case .success(let reset?) = result else { return socket.fail(request.id, .patchNotStored) }
                // A `cv:` key named the archived conversation: the answer names the fresh one.
                summary(of: reset.fresh.id, answering: request.id, on: socket) { [self] summary in
                    let entry = sessionEntry(summary)
                    return SessionsEntryResult(key: entry.key, entry: entry)
                }
            }
        }
    }

    /// `{key?, label?, model?, thinkingLevel?, category?, …}`: makes the session (or adopts the
    /// one the key names) with those settings, as `sessions.patch` takes them.
    func createSession(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        var fields = request.fields
        if let other = fields.keys.sorted().first(where: { !Self.createProperties.contains($0) && !Self.createLineage.contains($0) }) {
            return socket.fail(request.id, .unsupportedProperty(other))
        }
        for name in Self.createLineage { fields[name] = nil }
        if fields["key"] == nil { fields["key"] = .string("chat-" + Identifiers.newUUID().prefix(8).lowercased()) }
        patchSession(GatewayRequest(id: request.id, method: request.method, params: .object(fields)), on: socket) { [self] key, summary in
            SessionsEntryResult(key: key, entry: sessionEntry(summary))
        }
    }

    /// What `sessions.create` takes: the key and the settings `sessions.patch` sets.
    static let createProperties: Set<String> = ["key", "agentId", "label", "model", "thinkingLevel", "category"]
    /// OpenClaw's session lineage (OpenClawKit sends `parentSessionKey` for a child session):
    /// taken, not kept: the relay's sessions have no parents.
    static let createLineage: Set<String> = ["parentSessionKey", "emitCommandHooks", "succeedsParent", "idempotencyKey"]

    /// `{key, deleteTranscript?}`: the session goes; with its transcript (the default) the
    /// conversation and its history are deleted, without it the conversation stays archived and
    /// reachable by its `cv:` key. The main session is refused, as OpenClaw refuses it.
    func deleteSession(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let params: SessionsDeleteParams
        switch SessionsDeleteParams.parse(request.fields) {
        case .success(let parsed): params = parsed
        case .failure(let error): return socket.fail(request.id, error)
        }
        guard params.key != HelloOk.SessionDefaults().mainKey else { return socket.fail(request.id, .mainSessionUndeletable) }
        conversation(named: params.key, creating: false) { [self] result in
            let conversation: Conversation
            switch result {
            case .success(let found): conversation = found
            case .failure(let error) where error is UnknownSession:
                return socket.reply(request.id, SessionsDeleteResult(key: params.key, deleted: false, archived: []))
            case .failure(let error): return socket.fail(request.id, Self.sessionError(error))
            }
            if let expected = params.expectedSessionId, expected != conversation.id { return socket.fail(request.id, .sessionChanged(params.key)) }
            if params.archivedOnly, !conversation.archived { return socket.fail(request.id, .notArchived(params.key)) }
            hub.turns.abort(conversationID: conversation.id, reason: "the session was deleted")
            guard params.deleteTranscript else {
                return hub.conversations.detach(id: conversation.id) { [self] detached in
                    guard case .success(let kept?) = detached else { return socket.fail(request.id, .patchNotStored) }
                    socket.reply(request.id, SessionsDeleteResult(key: params.key, deleted: true, archived: [SessionListing.key(of: kept)]))
                    broadcastDeleted(params.key)
                }
            }
            hub.conversations.delete(id: conversation.id) { deleted in
                guard case .success(let done) = deleted else { return socket.fail(request.id, .patchNotStored) }
                socket.reply(request.id, SessionsDeleteResult(key: params.key, deleted: done, archived: []))
            }
        }
    }

    /// `{key, maxLines?}`: a backend that compacts (Claude Code) runs its `/compact` as a turn of
    /// the conversation, in order with its other turns; the answer waits for it. Others answer
    /// `compacted: false`, as OpenClaw does for a session with nothing to compact.
    func compactSession(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let key: String
        switch SessionParams.key(in: request.fields, taking: ["key", "agentId", "maxLines"]) {
        case .success(let found): key = found
        case .failure(let error): return socket.fail(request.id, error)
        }
        withConversation(key, creating: false, request, on: socket) { [self] conversation in
            let backend = hub.router.backend(named: backendName(for: conversation))
            guard backend?.canCompact == true else {
                hub.conversations.compacted(conversation.id, userID: conversation.userID, done: false)
                return socket.reply(request.id, SessionsCompactResult(key: key, compacted: false, reason: "its backend keeps no context to compact"))
            }
            let runID = "compact-" + Identifiers.newUUID()
            let message = UserMessage(
                conversationID: conversation.id,
                userID: settings.userID,
                deviceID: socket.deviceID,
                clientID: runID,
                runID: runID,
                content: "/compact"
            )
            hub.turns.submit(message, policy: settings.turnPolicy) { [hub] outcome in
                guard case .accepted = outcome else { return socket.fail(request.id, .messageNotStored) }
                hub.turns.whenEnded(runID: runID) { end in
                    guard case .answered = end else {
                        return socket.reply(request.id, SessionsCompactResult(key: key, compacted: false, reason: "the compaction failed"))
                    }
                    socket.reply(request.id, SessionsCompactResult(key: key, compacted: true))
                }
            }
        }
    }

    /// `sessions.changed {sessionKey, reason: "delete", ts}` (no row: the session is gone).
    func broadcastDeleted(_ key: String) {
        broadcast("sessions.changed", SessionsChanged(sessionKey: key, reason: "delete", ts: clock.nowMillis(), session: nil), to: \.readsChat)
    }

    /// The conversation `key` names, or the request answered with why there is none.
    private func withConversation(
        _ key: String,
        creating: Bool,
        _ request: GatewayRequest<JSONValue>,
        on socket: GatewaySocket,
        _ body: @escaping (Conversation) -> Void
    ) {
        conversation(named: key, creating: creating) { result in
            switch result {
            case .success(let conversation): body(conversation)
            case .failure(let error): socket.fail(request.id, Self.sessionError(error))
            }
        }
    }
}
