import DiscoClawWire
import Foundation
import RelayCore
import RelayTransport

extension DiscoClawDownstream {
    /// `GET /conversations/:id/messages?limit=50&before=<seq>`: the newest `limit` (≤ 200)
    /// before `before`, oldest first, and whether older ones exist.
    func listMessages(_ id: String, for device: DiscoClawDevice, _ exchange: HTTPExchange) {
        let limit: Int
        let before: Int64?
        switch (
            DiscoClawTimeline.integer("limit", exchange.headers.queryValue("limit")),
            DiscoClawTimeline.integer("before", exchange.headers.queryValue("before"))
        ) {
        case (.failure(let bad), _), (_, .failure(let bad)): return exchange.respond(DiscoClawReply.error(bad))
        case (.success(let given), .success(let cursor)): (limit, before) = (DiscoClawTimeline.pageLimit(given), cursor)
        }
        withConversation(id, of: device, exchange) { [self] conversation in
            let userID = device.userID
            hub.history.page(
                userID: userID,
                conversationID: conversation.id,
                before: before,
                limit: limit,
                byteBudget: DiscoClawTimeline.responseBudget
            ) {
                [self] result in
                switch result {
                case .failure(let error): storeFailed(exchange, error)
                case .success(let page):
                    markRead(page.entries, userID: userID)
                    let messages = DiscoClawTimeline.live(page.entries) { hub.turns.unfinished(userID: userID) }.map(DiscoClawMessage.init)
                    exchange.respond(DiscoClawReply.json(200, DiscoClawMessagePage(messages: messages, hasMore: page.hasMore)))
                }
            }
        }
    }

    /// `GET /sync?since=<seq>`: conversations changed and messages stored after `since`, every
    /// message's conversation included, and the cursor to ask from next.
    func sync(for device: DiscoClawDevice, _ exchange: HTTPExchange) {
        let since: Int64
        switch DiscoClawTimeline.integer("since", exchange.headers.queryValue("since")) {
        case .failure(let bad): return exchange.respond(DiscoClawReply.error(bad))
        case .success(let value): since = value ?? 0
        }
        let userID = device.userID
        hub.history.sync(userID: userID, after: since, limit: DiscoClawTimeline.syncLimit, byteBudget: DiscoClawTimeline.responseBudget) {
            [self] result in
            switch result {
            case .failure(let error): storeFailed(exchange, error)
            case .success(let batch):
                markRead(batch.entries, userID: userID)
                let page = DiscoClawSyncPage(
                    conversations: batch.conversations.map { DiscoClawConversation($0) },
                    messages: DiscoClawTimeline.live(batch.entries) { hub.turns.unfinished(userID: userID) }.map(DiscoClawMessage.init),
                    cursor: DiscoClawTimeline.cursor(since: since, batch)
                )
                exchange.respond(DiscoClawReply.json(200, page))
            }
        }
    }

    /// What the app fetched while in use counts as read, which clears unread counts and pushes on
    /// the user's other devices (as the gateway's `chat.history` does).
    private func markRead(_ entries: [TimelineEntry], userID: String) {
        for (conversationID, seq) in DiscoClawTimeline.readMarks(entries) { hub.read(userID: userID, conversationID: conversationID, seq: seq) }
    }

    /// `POST /conversations/:id/messages {content, clientId?}`: stores the message, starts its
    /// turn, answers 201 with the answer's id; the answer streams over the WebSocket. A retry with
    /// the same `clientId` gets the same answer without a second turn.
    func postMessage(_ id: String, _ body: [String: JSONValue], for device: DiscoClawDevice, _ exchange: HTTPExchange) {
        let request: DiscoClawMessageRequest
        do { request = try DiscoClawMessageRequest(json: body) } catch { return exchange.respond(DiscoClawReply.error(error)) }
        withConversation(id, of: device, exchange) { [self] conversation in
            let message = UserMessage(
                conversationID: conversation.id,
                userID: device.userID,
                deviceID: device.id,
                clientID: request.clientId ?? DiscoClawMessage.unnamedClientID(),
                content: request.content.trimmingCharacters(in: .whitespacesAndNewlines)
            )
            hub.turns.submit(message, policy: settings.turnPolicy) { [self] outcome in
                switch outcome {
                case .accepted(let event, _, let answer): accepted(event, answer: answer, clientID: request.clientId, device: device, exchange)
                case .duplicate: repeatAnswer(message, clientID: request.clientId, exchange)
                case .mismatch: exchange.respond(DiscoClawReply.error(.clientIDReusedForAnotherMessage))
                case .queueFull: exchange.respond(DiscoClawReply.error(.queueFull))
                case .rejected(let error): exchange.respond(DiscoClawReply.error(.turnRejected("\(error)")))
                case .missingAsset(let asset): exchange.respond(DiscoClawReply.error(.unknownAttachment("\(asset)")))
                case .storeFailed(let error): storeFailed(exchange, error)
                }
            }
        }
    }

    /// Answers 201. The device's sockets hold the answer's events until `answerHoldMillis` after
    /// the reply is written (the app drops events about a row it has not inserted yet), and announce
    /// an answer that ended meanwhile again after `answerAnnounceMillis`.
    private func accepted(_ event: ChatEvent, answer: AnswerSlot, clientID: String?, device: DiscoClawDevice, _ exchange: HTTPExchange) {
        let own = sockets.values.filter { $0.deviceID == device.id }
        for socket in own { socket.machine.hold(answer, conversationID: event.conversationID) }
        let posted = DiscoClawPosted(id: event.id, seq: event.seq, clientId: clientID, assistantMessageId: answer.id)
        exchange.respond(DiscoClawReply.json(201, posted)) { [self] in
            hub.loop.schedule(afterMillis: settings.answerHoldMillis) { [self] in
                for socket in own { perform(socket.machine.release(answer.id), on: socket) }
            }
            hub.loop.schedule(afterMillis: settings.answerAnnounceMillis) { [self] in
                for socket in own { perform(socket.machine.announce(answer.id), on: socket) }
            }
        }
    }

    /// A retried `POST`: the ids the first one got.
    private func repeatAnswer(_ message: UserMessage, clientID: String?, _ exchange: HTTPExchange) {
        hub.history.message(deviceID: message.deviceID, clientID: message.clientID) { [self] result in
            switch result {
            case .failure(let error): storeFailed(exchange, error)
            case .success(nil): exchange.respond(DiscoClawReply.error(.clientIDUsed))
            case .success(let stored?):
                let posted = DiscoClawPosted(
                    id: stored.event.id,
                    seq: stored.event.seq,
                    clientId: clientID,
                    assistantMessageId: stored.record.assistantEventID
                )
                exchange.respond(DiscoClawReply.json(201, posted))
            }
        }
    }
}
