import GatewayWire
import RelayCore

/// `sessions.patch`: the user's settings of a session, in OpenClaw's shape. `model` rebinds the
/// conversation to a backend, as `/backend` does; the rest is kept with the conversation
/// (`ConversationSettings`) for every protocol, and the backends that understand a setting get it
/// with each turn.
extension GatewayDownstream {
    func patchSession(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        patchSession(request, on: socket) { [self] key, summary in SessionsPatchResult(key: key, entry: sessionEntry(summary)) }
    }

    /// Applies a patch (the session is made when the key names none) and answers with
    /// `answer(key, the session's summary)`.
    func patchSession<Payload: Codable & Equatable & Sendable>(
        _ request: GatewayRequest<JSONValue>,
        on socket: GatewaySocket,
        answer: @escaping (String, ConversationSummary) -> Payload
    ) {
        let patch: SessionPatch
        let changes: [ConversationEdit]
        switch SessionPatch.parse(request.fields).flatMap(self.edits(for:)) {
        case .success(let (parsed, made)): (patch, changes) = (parsed, made)
        case .failure(let error): return socket.fail(request.id, error)
        }
        conversation(named: patch.key, creating: true) { [self] result in
            let conversation: Conversation
            switch result {
            case .success(let found): conversation = found
            case .failure(let error): return socket.fail(request.id, Self.sessionError(error))
            }
            hub.conversations.edit(id: conversation.id, .all(changes)) { [self] edited in
                guard case .success(.some) = edited else { return socket.fail(request.id, .patchNotStored) }
                let reply = { [self] in
                    summary(of: conversation.id, answering: request.id, on: socket) { summary in answer(patch.key, summary) }
                }
                // `unread: false` is a read of the whole session: its unread count becomes 0.
                guard patch.unread == false else { return reply() }
                hub.read(userID: settings.userID, conversationID: conversation.id, seq: Int64.max) { _ in reply() }
            }
        }
    }

    /// The core's edits for a patch (the patch itself comes along), or why it is refused: a model
    /// no backend answers to, a thinking or verbose level the relay does not know.
    private func edits(for patch: SessionPatch) -> Result<(SessionPatch, [ConversationEdit]), GatewayError> {
        var edits: [ConversationEdit] = []
        switch patch.label {
        case .set(let label)?: edits.append(.retitle(label))
        case .clear?: edits.append(.retitle(nil))
        case nil: break
        }
        switch patch.model {
        case .set(let model)?:
            guard let backend = ModelChoice.backend(named: model, kinds: settings.backendKinds, routed: Set(hub.router.backends.keys)) else {
                return .failure(.unknownModel(model, known: ModelChoice.listed(kinds: settings.backendKinds)))
            }
            edits.append(.rebind(backend: backend))
        case .clear?: edits.append(.rebind(backend: nil))
        case nil: break
        }
        switch patch.thinkingLevel {
        case .set(let text)?:
            guard let level = ThinkingLevel.canonical(text) else { return .failure(.invalidLevel("thinkingLevel", choices: ThinkingLevel.all)) }
            edits.append(.configure(.thinkingLevel(level)))
        case .clear?: edits.append(.configure(.thinkingLevel(nil)))
        case nil: break
        }
        switch patch.verboseLevel {
        case .set(let text)?:
            guard let level = ConversationSettings.verboseLevel(text) else {
                return .failure(.invalidLevel("verboseLevel", choices: ConversationSettings.verboseLevels))
            }
            edits.append(.configure(.verboseLevel(level)))
        case .clear?: edits.append(.configure(.verboseLevel(nil)))
        case nil: break
        }
        switch patch.fastMode {
        case .set(let mode)?: edits.append(.configure(.fastMode(ConversationSettings.FastMode(rawValue: mode.rawValue))))
        case .clear?: edits.append(.configure(.fastMode(nil)))
        case nil: break
        }
        switch patch.category {
        case .set(let category)?: edits.append(.configure(.category(category)))
        case .clear?: edits.append(.configure(.category(nil)))
        case nil: break
        }
        if let pinned = patch.pinned { edits.append(.configure(.pinned(pinned))) }
        if let archived = patch.archived { edits.append(.archive(archived)) }
        if let unread = patch.unread { edits.append(.configure(.markedUnread(unread))) }
        return .success((patch, edits))
    }
}

/// How a model a client picked names a backend: the relay's `models.list` lists each backend as
/// `{id: name, provider: kind}`, and OpenClaw's pickers send `"<provider>/<id>"`; the bare name is
/// taken too.
enum ModelChoice {
    /// The backend `model` names, nil when none does (or it is not routed to).
    static func backend(named model: String, kinds: [String: String], routed: Set<String>) -> String? {
        if routed.contains(model) { return model }
        guard let slash = model.firstIndex(of: "/") else { return nil }
        let (provider, name) = (String(model[..<slash]), String(model[model.index(after: slash)...]))
        return routed.contains(name) && kinds[name] == provider ? name : nil
    }

    /// Every choice as a picker writes it, for an error message.
    static func listed(kinds: [String: String]) -> [String] {
        kinds.sorted { $0.key < $1.key }.map { "\($0.value)/\($0.key)" }
    }
}
