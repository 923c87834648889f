import RelayCore
import RelayTransport

extension DiscoClawDownstream {
    /// Conversations `GET /conversations` lists at most.
    static let listLimit = 500
    static var titleTooLong: HTTPResponse { DiscoClawWire.badRequest("title is longer than \(Conversation.maxTitleBytes) bytes") }

    /// `GET /conversations?archived=`: the user's conversations (archived ones only with
    /// `archived=true`), most recent first, with their last message.
    func listConversations(for device: Device, archived: String?, _ exchange: HTTPExchange) {
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
                case .success(let last):
                    exchange.respond(DiscoClawWire.json(200, .array(list.map { DiscoClawWire.conversation($0, lastMessage: last[$0.id]) })))
                }
            }
        }
    }

    /// `POST /conversations {title?, backend?}`: `backend` binds it to one `[[backends]]` entry.
    func createConversation(_ body: [String: JSONValue], for device: Device, _ exchange: HTTPExchange) {
        let title = body["title"]?.stringValue
        guard (title?.utf8.count ?? 0) <= Conversation.maxTitleBytes else { return exchange.respond(Self.titleTooLong) }
        let backend = body["backend"]?.stringValue
        if let backend, hub.router.backends[backend] == nil {
            let names = hub.router.backends.keys.sorted().joined(separator: ", ")
            return exchange.respond(DiscoClawWire.badRequest("no backend named \(backend.prefix(64)); configured: \(names)"))
        }
        let key = ConversationKey(DiscoClawKeys.conversation, Identifiers.newUUID())
        hub.conversations.resolve(key, userID: device.userID, draft: ConversationDraft(title: title, backend: backend)) { [self] result in
            switch result {
            case .failure(let error): storeFailed(exchange, error)
            case .success(let conversation):
                conversationUpdated(conversation.id, userID: device.userID, except: device.id)
                exchange.respond(DiscoClawWire.json(201, DiscoClawWire.conversation(conversation)))
            }
        }
    }

    func showConversation(_ id: String, for device: Device, _ exchange: HTTPExchange) {
        withConversation(id, of: device, exchange) { conversation in
            guard case .object(var fields) = DiscoClawWire.conversation(conversation) else { return }
            fields["claudeSessionId"] = .null
            exchange.respond(DiscoClawWire.json(200, .object(fields)))
        }
    }

    /// `PATCH /conversations/:id {title?, archived?, backend?}`.
    func updateConversation(_ id: String, _ body: [String: JSONValue], for device: Device, _ exchange: HTTPExchange) {
        if let title = body["title"], title.stringValue == nil, !title.isNull {
            return exchange.respond(DiscoClawWire.badRequest("title must be a string"))
        }
        if let archived = body["archived"], archived.boolValue == nil {
            return exchange.respond(DiscoClawWire.badRequest("archived must be a boolean"))
        }
        if let title = body["title"]?.stringValue, title.utf8.count > Conversation.maxTitleBytes { return exchange.respond(Self.titleTooLong) }
        let backend = body["backend"]?.stringValue
        if let backend, hub.router.backends[backend] == nil {
            return exchange.respond(DiscoClawWire.badRequest("no backend named \(backend.prefix(64))"))
        }
        var edits: [ConversationEdit] = []
        if let title = body["title"] { edits.append(.retitle(title.stringValue)) }
        if let archived = body["archived"]?.boolValue { edits.append(.archive(archived)) }
        if let backend { edits.append(.rebind(backend: backend)) }
        withConversation(id, of: device, exchange) { [self] _ in
            // Every socket of the user hears the change (`conversationChanged`).
            hub.conversations.edit(id: id, .all(edits)) { [self] result in
                switch result {
                case .failure(let error): storeFailed(exchange, error)
                case .success(nil): exchange.respond(DiscoClawWire.notFound)
                case .success(let conversation?): exchange.respond(DiscoClawWire.json(200, DiscoClawWire.conversation(conversation)))
                }
            }
        }
    }

    /// `DELETE /conversations/:id`: its turns stop, then it and its history go.
    func deleteConversation(_ id: String, for device: Device, _ exchange: HTTPExchange) {
        withConversation(id, of: device, exchange) { [self] _ in
            hub.turns.abort(conversationID: id, reason: "the conversation was deleted")
            hub.conversations.delete(id: id) { [self] result in
                if case .failure(let error) = result { return storeFailed(exchange, error) }
                exchange.respond(DiscoClawWire.noContent)
            }
        }
    }
}
