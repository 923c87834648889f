import GatewayWire
import RelayCore

/// A `cv:` key (or any key `sessions.markRead` is given) that names no conversation of this
/// gateway's user; answered like any unknown session.
struct UnknownSession: Error {}

/// A `backend:<name>:…` key for a new conversation, naming a backend the relay does not have.
struct UnknownBackend: Error {
    var name: String
    var configured: [String]
}

/// Every conversation of the user with unread counts (`sessions.list`, `sessions.markRead`, the
/// `sessions.changed` event), the session methods (`GatewayDownstream+SessionPatch`) and the
/// backends with their link states (`backends.list`).
extension GatewayDownstream {
    func handleSessions(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        switch request.method {
        case "sessions.list": listSessions(request, on: socket)
        case "sessions.markRead": markRead(request, on: socket)
        case "sessions.patch": patchSession(request, on: socket)
        case "sessions.reset": resetSession(request, on: socket)
        case "sessions.create": createSession(request, on: socket)
        case "sessions.delete": deleteSession(request, on: socket)
        case "sessions.compact": compactSession(request, on: socket)
        default: listBackends(request, on: socket)
        }
    }

    /// The backend a `chat.send` from this gateway reaches for the conversation.
    func backendName(for conversation: Conversation) -> String {
        conversation.backend ?? settings.backend ?? hub.router.defaultBackend
    }

    func sessionEntry(_ summary: ConversationSummary) -> SessionEntry {
        let backend = backendName(for: summary.conversation)
        return SessionListing.entry(summary, backend: backend, backendKind: settings.backendKinds[backend])
    }

    /// Every conversation of the user, whatever protocol made it, the most recently updated first,
    /// at most `limit` (default and most: `SessionListing.maxSessions`); `truncated` says when
    /// more exist.
    private func listSessions(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let most = Int64(SessionListing.maxSessions)
        let limit = Int(min(most, max(1, request.params(as: SessionsListParams.self)?.limit ?? most)))
        let now = clock.nowMillis()
        hub.history.summaries(userID: settings.userID, limit: limit + 1) { [self] result in
            guard case .success(let found) = result else { return socket.fail(request.id, .sessionsUnreadable) }
            let page = found.prefix(limit).sorted { SessionListing.updatedAt($0) > SessionListing.updatedAt($1) }
            socket.reply(request.id, SessionsList(ts: now, sessions: page.map(sessionEntry), truncated: found.count > limit))
        }
    }

    /// `{key, seq}`: the user has read the session up to `seq` (clamped to its newest message; a
    /// cursor never moves back).
    private func markRead(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let params = request.params(as: MarkReadParams.self)
        guard let key = params?.key ?? params?.sessionKey, !key.isEmpty else { return socket.fail(request.id, .keyRequired) }
        guard let seq = params?.seq, seq >= 0 else { return socket.fail(request.id, .seqRequired) }
        conversation(named: key, creating: false) { [self] result in
            let conversation: Conversation
            switch result {
            case .success(let found): conversation = found
            case .failure(let error): return socket.fail(request.id, Self.sessionError(error))
            }
            hub.read(userID: settings.userID, conversationID: conversation.id, seq: seq) { [self] moved in
                guard case .success = moved else { return socket.fail(request.id, .readNotStored) }
                summary(of: conversation.id, answering: request.id, on: socket) { summary in
                    MarkReadResult(key: key, lastReadSeq: summary.lastReadSeq, unreadCount: Int64(summary.unreadCount))
                }
            }
        }
    }

    /// Reads the conversation's summary for this gateway's user and answers `requestID` with
    /// `payload(summary)`, or with UNAVAILABLE when it cannot be read.
    func summary<Payload: Codable & Equatable & Sendable>(
        of conversationID: String,
        answering requestID: String,
        on socket: GatewaySocket,
        _ payload: @escaping (ConversationSummary) -> Payload
    ) {
        hub.history.summary(of: conversationID, for: settings.userID) { result in
            guard case .success(let summary?) = result else { return socket.fail(requestID, .sessionUnreadable) }
            socket.reply(requestID, payload(summary))
        }
    }

    private func listBackends(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let list = settings.backendKinds.sorted { $0.key < $1.key }.map { name, kind in
            BackendsList.Backend(name: name, kind: kind, state: hub.accounts.state(of: name)?.rawValue ?? "ready")
        }
        socket.reply(request.id, BackendsList(backends: list, default: settings.backend ?? hub.router.defaultBackend))
    }

    /// How a failed lookup of a session is answered.
    static func sessionError(_ error: any Error) -> GatewayError {
        if let unknown = error as? UnknownBackend { return .unknownBackend(unknown.name, configured: unknown.configured) }
        return error is UnknownSession ? .unknownSession : .sessionUnavailable
    }

    // MARK: sessions.changed

    /// A conversation was created, changed, reset, compacted or deleted, or a read cursor moved,
    /// somewhere in the core (any protocol's doing).
    func conversationChanged(_ change: ConversationChange) {
        guard change.userID == settings.userID else { return }
        switch change {
        case .created: sessionChanged(change.conversationID, reason: "create")
        case .conversation: sessionChanged(change.conversationID, reason: "patch")
        case .read: sessionChanged(change.conversationID, reason: "read")
        case .reset(let reset, let reason):
            // The key's fresh session, and the archived one (now named by its `cv:` key). Sockets
            // that take the key's messages go on with the fresh one, as Clawline and Companion do.
            for socket in sockets.values where socket.messageSessions.remove(reset.old.id) != nil { socket.messageSessions.insert(reset.fresh.id) }
            sessionChanged(reset.fresh.id, reason: reason.rawValue)
            sessionChanged(reset.old.id, reason: "patch")
        case .compacted(let id, _, let done): sessionChanged(id, reason: "compact", compacted: done)
        case .deleted(let conversation): broadcastDeleted(SessionListing.key(of: conversation))
        }
    }

    /// Sends `sessions.changed {sessionKey, reason, ts, session}` (`session`: the conversation's
    /// `sessions.list` row) to every operator that reads chat. Reads of one conversation do not
    /// pile up: changes while its row is being read make one more read afterwards, sent with the
    /// most telling of their reasons (a `create`, `reset` or `compact` over a `send` or `read`).
    func sessionChanged(_ conversationID: String, reason: String, compacted: Bool? = nil) {
        guard sockets.values.contains(where: \.readsChat) else { return }
        let change = PendingSessionChange(reason: reason, compacted: compacted)
        if let pending = summaryReads[conversationID] {
            if pending?.isRoutine ?? true { summaryReads[conversationID] = change }
            return
        }
        summaryReads[conversationID] = .some(nil)
        let user = settings.userID
        hub.history.summary(of: conversationID, for: user) { [weak self] result in
            guard let self else { return }
            let again = summaryReads.removeValue(forKey: conversationID) ?? nil
            if case .success(let summary?) = result, summary.conversation.userID == user {
                let entry = sessionEntry(summary)
                broadcast(
                    "sessions.changed",
                    SessionsChanged(sessionKey: entry.key, reason: reason, ts: clock.nowMillis(), session: entry, compacted: compacted),
                    to: \.readsChat
                )
            }
            if let again { sessionChanged(conversationID, reason: again.reason, compacted: again.compacted) }
        }
    }
}

/// A `sessions.changed` waiting for its conversation's row to be read again.
struct PendingSessionChange {
    var reason: String
    var compacted: Bool?

    /// A message or a read: any other change says more.
    var isRoutine: Bool { reason == "send" || reason == "read" }
}
