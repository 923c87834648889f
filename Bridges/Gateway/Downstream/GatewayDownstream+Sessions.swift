import RelayCore

/// A `cv:` key (or any key `sessions.markRead` is given) that names no conversation of this
/// gateway's user; answered like any unknown session.
struct UnknownSession: Error {}

/// What a terminal chat client needs besides chat: every conversation of the user with unread
/// counts (`sessions.list`, `sessions.markRead`, the `sessions.changed` event) and the backends
/// with their link states (`backends.list`).
extension GatewayDownstream {
    func handleSessions(_ request: GatewayRequest, on session: GatewaySession) {
        guard Self.readsChat(session) else { return session.fail(request.id, .invalid("missing scope operator.read"), close: nil) }
        switch request.method {
        case "sessions.list": listSessions(request, on: session)
        case "sessions.markRead": markRead(request, on: session)
        case "sessions.patch": patch(request, on: session)
        default: listBackends(request, on: session)
        }
    }

    /// The backend a `chat.send` from this gateway reaches for the conversation.
    func backendName(for conversation: Conversation) -> String {
        conversation.backend ?? settings.backend ?? hub.router.defaultBackend
    }

    func sessionJSON(_ summary: ConversationSummary) -> JSONValue {
        let backend = backendName(for: summary.conversation)
        return SessionListing.json(summary, backend: backend, backendKind: settings.backendKinds[backend])
    }

    /// Every conversation of the user, whatever protocol made it, the most recently updated first,
    /// at most `limit` (default and most: `SessionListing.maxSessions`); `truncated` says when
    /// more exist.
    private func listSessions(_ request: GatewayRequest, on session: GatewaySession) {
        let limit = Int(min(Int64(SessionListing.maxSessions), max(1, request.params["limit"]?.intValue ?? Int64(SessionListing.maxSessions))))
        let now = clock.nowMillis()
        hub.history.summaries(userID: settings.userID, limit: limit + 1) { [self] result in
            guard case .success(let found) = result else {
                return session.fail(request.id, GatewayError(code: .unavailable, message: "the sessions could not be read"), close: nil)
            }
            let page = found.prefix(limit).sorted { SessionListing.updatedAt($0) > SessionListing.updatedAt($1) }
            let list = page.map(sessionJSON)
            session.send(
                GatewayFrame.ok(
                    request.id,
                    .object([
                        "ts": .int(now), "count": .int(Int64(list.count)), "sessions": .array(list), "truncated": .bool(found.count > limit),
                    ])
                )
            )
        }
    }

    /// `{key, seq}`: the user has read the session up to `seq` (clamped to its newest message; a
    /// cursor never moves back). Answers `{key, lastReadSeq, unreadCount}`. `sessionKey` is taken
    /// for `key`, as the chat methods name it.
    private func markRead(_ request: GatewayRequest, on session: GatewaySession) {
        guard let key = request.string("key") ?? request.string("sessionKey"), !key.isEmpty else {
            return session.fail(request.id, .invalid("key required"), close: nil)
        }
        guard let seq = request.params["seq"]?.intValue, seq >= 0 else {
            return session.fail(request.id, .invalid("seq must be a non-negative integer"), close: nil)
        }
        conversation(named: key, creating: false) { [self] result in
            let conversation: Conversation
            switch result {
            case .success(let found): conversation = found
            case .failure(let error): return session.fail(request.id, Self.sessionError(error), close: nil)
            }
            let user = settings.userID
            hub.read(userID: user, conversationID: conversation.id, seq: seq) { [self] moved in
                guard case .success = moved else {
                    return session.fail(request.id, GatewayError(code: .unavailable, message: "the read position could not be stored"), close: nil)
                }
                summary(of: conversation.id, answering: request, on: session) { summary in
                    .object(["key": .string(key), "lastReadSeq": .int(summary.lastReadSeq), "unreadCount": .int(Int64(summary.unreadCount))])
                }
            }
        }
    }

    /// `{key, label}`: renames the session (`label: null` clears the title), for every protocol
    /// that shows the conversation. Answers `{ok, key, entry}` (`entry`: its `sessions.list`
    /// entry), as OpenClaw does. The relay patches only the label: any other property (OpenClaw's
    /// model or thinking overrides) is refused rather than silently ignored.
    private func patch(_ request: GatewayRequest, on session: GatewaySession) {
        guard session.has("operator.write") else { return session.fail(request.id, .invalid("missing scope operator.write"), close: nil) }
        guard let key = request.string("key"), !key.isEmpty else { return session.fail(request.id, .invalid("key required"), close: nil) }
        if let other = request.params.keys.sorted().first(where: { $0 != "key" && $0 != "label" }) {
            return session.fail(request.id, .invalid("unsupported property '\(other.prefix(64))': this relay patches label only"), close: nil)
        }
        let label: String?
        switch request.params["label"] {
        case .string(let text)?:
            guard text.utf8.count <= Conversation.maxTitleBytes else {
                return session.fail(request.id, .invalid("label is longer than \(Conversation.maxTitleBytes) bytes"), close: nil)
            }
            label = text.isEmpty ? nil : text
        case .null?: label = nil
        default: return session.fail(request.id, .invalid("label must be a string or null"), close: nil)
        }
        conversation(named: key, creating: false) { [self] result in
            let conversation: Conversation
            switch result {
            case .success(let found): conversation = found
            case .failure(let error): return session.fail(request.id, Self.sessionError(error), close: nil)
            }
            hub.conversations.edit(id: conversation.id, .retitle(label)) { [self] edited in
                guard case .success(.some) = edited else {
                    return session.fail(request.id, GatewayError(code: .unavailable, message: "the session could not be renamed"), close: nil)
                }
                summary(of: conversation.id, answering: request, on: session) { [self] summary in
                    .object(["ok": .bool(true), "key": .string(key), "entry": sessionJSON(summary)])
                }
            }
        }
    }

    /// Reads the conversation's `sessions.list` summary for this gateway's user and answers
    /// `request` with `payload(summary)`, or with UNAVAILABLE when it cannot be read.
    private func summary(
        of conversationID: String,
        answering request: GatewayRequest,
        on session: GatewaySession,
        _ payload: @escaping (ConversationSummary) -> JSONValue
    ) {
        hub.history.summary(of: conversationID, for: settings.userID) { result in
            guard case .success(let summary?) = result else {
                return session.fail(request.id, GatewayError(code: .unavailable, message: "the session could not be read"), close: nil)
            }
            session.send(GatewayFrame.ok(request.id, payload(summary)))
        }
    }

    /// `{backends:[{name, kind, state}], default}`: `state` is an upstream account's link state
    /// (`connected`, `retrying`, …) or `ready` for a built-in backend.
    private func listBackends(_ request: GatewayRequest, on session: GatewaySession) {
        let list = settings.backendKinds.sorted { $0.key < $1.key }.map { name, kind in
            JSONValue.object(["name": .string(name), "kind": .string(kind), "state": .string(hub.accounts.state(of: name)?.rawValue ?? "ready")])
        }
        let fallback = settings.backend ?? hub.router.defaultBackend
        session.send(GatewayFrame.ok(request.id, .object(["backends": .array(list), "default": .string(fallback)])))
    }

    /// How a failed lookup of a session is answered.
    static func sessionError(_ error: any Error) -> GatewayError {
        if error is UnknownSession { return .invalid("unknown session", ["code": .string("UNKNOWN_SESSION")]) }
        return GatewayError(code: .unavailable, message: "the session could not be opened")
    }

    // MARK: sessions.changed

    /// A conversation was created or changed, or a read cursor moved, somewhere in the core.
    func conversationChanged(_ change: ConversationChange) {
        guard change.userID == settings.userID else { return }
        sessionChanged(change.conversationID)
    }

    /// Sends `sessions.changed` (the conversation's `sessions.list` entry) to every operator that
    /// reads chat. Reads of one conversation do not pile up: a change while its summary is being
    /// read makes one more read afterwards.
    func sessionChanged(_ conversationID: String) {
        guard sessions.values.contains(where: { $0.isConnected && Self.readsChat($0) }) else { return }
        if summaryReads[conversationID] != nil {
            summaryReads[conversationID] = true
            return
        }
        summaryReads[conversationID] = false
        let user = settings.userID
        hub.history.summary(of: conversationID, for: user) { [weak self] result in
            guard let self else { return }
            let again = summaryReads.removeValue(forKey: conversationID) ?? false
            if case .success(let summary?) = result, summary.conversation.userID == user {
                broadcast("sessions.changed", sessionJSON(summary)) { $0.isConnected && Self.readsChat($0) }
            }
            if again { sessionChanged(conversationID) }
        }
    }
}
