import DiscoClawWire
import RelayCore
import RelayTransport

extension DiscoClawDownstream {
    /// Conversations `GET /conversations` lists at most.
    static let listLimit = 500

    /// `GET /conversations?archived=`: the user's conversations (archived ones only with
    /// `archived=true`), most recent first, with their last message.
    func listConversations(for device: DiscoClawDevice, archived: String?, _ exchange: HTTPExchange) {
        let includeArchived = archived == "true" || archived == "1"
        hub.conversations.list(userID: device.userID, limit: Self.listLimit) { [self] result in
            let all: [Conversation]
            switch result {
            case .failure(let error): return storeFailed(exchange, error)
            case .success(let found): all = found
            }
            let list = all.filter { includeArchived || !$0.archived }
            hub.history.lastEvents(of: list.map(\.id)) { [self] result in
                switch result {
                case .failure(let error): storeFailed(exchange, error)
                case .success(let last): exchange.respond(DiscoClawReply.json(200, list.map { DiscoClawConversation($0, lastMessage: last[$0.id]) }))
                }
            }
        }
    }

    /// `POST /conversations {title?, backend?}`: `backend` binds it to one `[[backends]]` entry.
    func createConversation(_ request: DiscoClawConversationRequest, for device: DiscoClawDevice, _ exchange: HTTPExchange) {
        if let error = refusal(title: request.title, backend: request.backend, listingBackends: true) {
            return exchange.respond(DiscoClawReply.error(error))
        }
        let key = ConversationKey(DiscoClawKeys.conversation, Identifiers.newUUID())
        let draft = ConversationDraft(title: request.title, backend: request.backend)
        hub.conversations.resolve(key, userID: device.userID, draft: draft) { [self] result in
            switch result {
            case .failure(let error): storeFailed(exchange, error)
            case .success(let conversation):
                conversationUpdated(conversation.id, userID: device.userID, except: device.id)
                exchange.respond(DiscoClawReply.json(201, DiscoClawConversation(conversation)))
            }
        }
    }

    func showConversation(_ id: String, for device: DiscoClawDevice, _ exchange: HTTPExchange) {
        withConversation(id, of: device, exchange) { conversation in
            var detail = DiscoClawConversation(conversation)
            detail.claudeSessionId = .some(nil)
            exchange.respond(DiscoClawReply.json(200, detail))
        }
    }

    /// `PATCH /conversations/:id {title?, archived?, backend?}`.
    func updateConversation(_ id: String, _ body: [String: JSONValue], for device: DiscoClawDevice, _ exchange: HTTPExchange) {
        let patch: DiscoClawConversationPatch
        do { patch = try DiscoClawConversationPatch(json: body) } catch { return exchange.respond(DiscoClawReply.error(error)) }
        if let error = refusal(title: patch.title ?? nil, backend: patch.backend, listingBackends: false) {
            return exchange.respond(DiscoClawReply.error(error))
        }
        withConversation(id, of: device, exchange) { [self] _ in
            // Every socket of the user hears the change (`conversationChanged`).
            hub.conversations.edit(id: id, .all(Self.edits(patch))) { [self] result in
                switch result {
                case .failure(let error): storeFailed(exchange, error)
                case .success(nil): exchange.respond(DiscoClawReply.error(.notFound))
                case .success(let conversation?): exchange.respond(DiscoClawReply.json(200, DiscoClawConversation(conversation)))
                }
            }
        }
    }

    /// The core's edits a patch asks for, in its members' order.
    static func edits(_ patch: DiscoClawConversationPatch) -> [ConversationEdit] {
        var edits: [ConversationEdit] = []
        if let title = patch.title { edits.append(.retitle(title)) }
        if let archived = patch.archived { edits.append(.archive(archived)) }
        if let backend = patch.backend { edits.append(.rebind(backend: backend)) }
        return edits
    }

    /// Why a title or backend is refused: too long a title, a backend the router does not know.
    func refusal(title: String?, backend: String?, listingBackends: Bool) -> DiscoClawError? {
        if let title, title.utf8.count > Conversation.maxTitleBytes { return .titleTooLong(maxBytes: Conversation.maxTitleBytes) }
        guard let backend, hub.router.backends[backend] == nil else { return nil }
        return .unknownBackend(backend, configured: listingBackends ? hub.router.backends.keys.sorted() : nil)
    }

    /// `DELETE /conversations/:id`: its turns stop, then it and its history go.
    func deleteConversation(_ id: String, for device: DiscoClawDevice, _ exchange: HTTPExchange) {
        withConversation(id, of: device, exchange) { [self] _ in
            hub.turns.abort(conversationID: id, reason: "the conversation was deleted")
            hub.conversations.delete(id: id) { [self] result in
                if case .failure(let error) = result { return storeFailed(exchange, error) }
                exchange.respond(DiscoClawReply.noContent)
            }
        }
    }
}
