import Foundation
import RelayCore
import RelayTransport

extension DiscoClawDownstream {
    /// Client ids longer than this are refused (the app sends a UUID).
    static let maxClientIDBytes = 128

    /// `GET /conversations/:id/messages?limit=50&before=<seq>`: the newest `limit` (≤ 200)
    /// before `before`, oldest first, and whether older ones exist.
    func listMessages(_ id: String, for device: Device, _ exchange: HTTPExchange) {
        let limit: Int64
        let before: Int64?
        switch (Self.integer("limit", in: exchange), Self.integer("before", in: exchange)) {
        case (.failure(let bad), _), (_, .failure(let bad)): return exchange.respond(DiscoClawWire.badRequest(bad.message))
        case (.success(let given), .success(let cursor)):
            limit = min(max(given ?? 50, 1), 200)
            before = cursor
        }
        withConversation(id, of: device, exchange) { [self] conversation in
            let userID = device.userID
            hub.history.page(userID: userID, conversationID: conversation.id, before: before, limit: Int(limit), byteBudget: Self.responseBudget) {
                [self] result in
                switch result {
                case .failure(let error): storeFailed(exchange, error)
                case .success(let page):
                    markRead(page.entries, userID: userID)
                    let messages = live(page.entries, userID: userID).map(DiscoClawWire.message)
                    exchange.respond(DiscoClawWire.json(200, .object(["messages": .array(messages), "hasMore": .bool(page.hasMore)])))
                }
            }
        }
    }

    /// `GET /sync?since=<seq>`: conversations changed and messages stored after `since`, every
    /// message's conversation included, and the cursor to ask from next.
    func sync(for device: Device, _ exchange: HTTPExchange) {
        let since: Int64
        switch Self.integer("since", in: exchange) {
        case .failure(let bad): return exchange.respond(DiscoClawWire.badRequest(bad.message))
        case .success(let value): since = value ?? 0
        }
        let (userID, limit) = (device.userID, Self.syncLimit)
        hub.history.sync(userID: userID, after: since, limit: limit, byteBudget: Self.responseBudget) { [self] result in
            switch result {
            case .failure(let error): storeFailed(exchange, error)
            case .success(let batch):
                let (entries, more, conversations) = (batch.entries, batch.more, batch.conversations)
                markRead(entries, userID: userID)
                // A cut answer (by count or size) ends at its last message, so the next sync goes on from there.
                let changes = conversations.map(\.changeSeq).filter { $0 > since }
                let cursor = more ? entries.last!.seq : max(since, entries.last?.seq ?? since, changes.max() ?? since)
                exchange.respond(
                    DiscoClawWire.json(
                        200,
                        .object([
                            "conversations": .array(conversations.map { DiscoClawWire.conversation($0) }),
                            "messages": .array(live(entries, userID: userID).map(DiscoClawWire.message)), "cursor": .int(cursor),
                        ])
                    )
                )
            }
        }
    }

    /// The app has no read receipts: messages it fetched while in use count as read (as the
    /// gateway's `chat.history` does), which clears unread counts and pushes on the user's other devices.
    private func markRead(_ entries: [TimelineEntry], userID: String) {
        var newest: [String: Int64] = [:]
        for entry in entries where entry.status == .complete { newest[entry.conversationID] = max(newest[entry.conversationID] ?? 0, entry.seq) }
        for (conversationID, seq) in newest { hub.read(userID: userID, conversationID: conversationID, seq: seq) }
    }

    /// Placeholders of answers still running get their text so far.
    private func live(_ entries: [TimelineEntry], userID: String) -> [TimelineEntry] {
        guard entries.contains(where: { $0.status == .pending }) else { return entries }
        let running = Dictionary(hub.turns.unfinished(userID: userID).map { ($0.eventID, $0) }, uniquingKeysWith: { first, _ in first })
        return entries.map { entry in
            guard entry.status == .pending, let progress = running[entry.id], progress.startedAt > 0 else { return entry }
            var live = entry
            live.status = .streaming
            live.content = progress.content
            return live
        }
    }

    /// `POST /conversations/:id/messages {content, clientId?}`: stores the message, starts its
    /// turn, answers 201 with the answer's id; the answer streams over the WebSocket. A retry with
    /// the same `clientId` gets the same answer without a second turn.
    func postMessage(_ id: String, _ body: [String: JSONValue], for device: Device, _ exchange: HTTPExchange) {
        guard let raw = body["content"]?.stringValue, case let content = raw.trimmingCharacters(in: .whitespacesAndNewlines), !content.isEmpty else {
            return exchange.respond(DiscoClawWire.badRequest("content is required"))
        }
        if let given = body["clientId"], given.stringValue == nil, !given.isNull {
            return exchange.respond(DiscoClawWire.badRequest("clientId must be a string"))
        }
        let clientID = body["clientId"]?.stringValue
        guard (clientID?.utf8.count ?? 0) <= Self.maxClientIDBytes, clientID?.isEmpty != true else {
            return exchange.respond(DiscoClawWire.badRequest("clientId must be 1 to \(Self.maxClientIDBytes) bytes"))
        }
        withConversation(id, of: device, exchange) { [self] conversation in
            let message = UserMessage(
                conversationID: conversation.id,
                userID: device.userID,
                deviceID: device.id,
                clientID: clientID ?? DiscoClawWire.unnamedClientID(),
                content: content
            )
            hub.turns.submit(message, policy: settings.turnPolicy) { [self] outcome in
                switch outcome {
                case .accepted(let event, _, let answer):
                    accepted(event, answer: answer, clientID: clientID, device: device, exchange)
                case .duplicate:
                    repeatAnswer(message, clientID: clientID, exchange)
                case .mismatch:
                    exchange.respond(DiscoClawWire.failure(409, "Conflict", "clientId was already used for a different message"))
                case .queueFull:
                    exchange.respond(
                        DiscoClawWire.failure(429, "Too Many Requests", "too many messages waiting in this conversation; wait for an answer")
                    )
                case .rejected(let error):
                    exchange.respond(DiscoClawWire.badRequest("\(error)"))
                case .missingAsset(let asset):
                    exchange.respond(DiscoClawWire.badRequest("unknown attachment \(asset)"))
                case .storeFailed(let error):
                    storeFailed(exchange, error)
                }
            }
        }
    }

    /// Answers 201; the device's sockets hold the answer's events until the reply is written.
    private func accepted(_ event: ChatEvent, answer: AnswerSlot, clientID: String?, device: Device, _ exchange: HTTPExchange) {
        let endpoints = sockets.values.filter { $0.deviceID == device.id }
        for endpoint in endpoints { endpoint.hold(answer.id) }
        exchange.respond(
            DiscoClawWire.json(
                201,
                .object([
                    "id": .string(event.id), "seq": .int(event.seq), "clientId": clientID.map(JSONValue.string) ?? .null,
                    "status": .string("complete"),
                    "assistantMessageId": .string(answer.id),
                ])
            )
        ) {
            for endpoint in endpoints { endpoint.release(answer.id) }
        }
    }

    /// A retried `POST`: the ids the first one got.
    private func repeatAnswer(_ message: UserMessage, clientID: String?, _ exchange: HTTPExchange) {
        hub.history.message(deviceID: message.deviceID, clientID: message.clientID) { [self] result in
            switch result {
            case .failure(let error): storeFailed(exchange, error)
            case .success(nil): exchange.respond(DiscoClawWire.failure(409, "Conflict", "clientId was already used"))
            case .success(let stored?):
                exchange.respond(
                    DiscoClawWire.json(
                        201,
                        .object([
                            "id": .string(stored.event.id), "seq": .int(stored.event.seq), "clientId": clientID.map(JSONValue.string) ?? .null,
                            "status": .string("complete"), "assistantMessageId": stored.record.assistantEventID.map(JSONValue.string) ?? .null,
                        ])
                    )
                )
            }
        }
    }
}
