import CompanionWire
import Dispatch
import RelayCore
import RelayTransport

/// The REST API: `CompanionREST` routes and answers, this performs the lookups in between.
extension CompanionDownstream {
    /// Requests waiting for an answer at once, at most.
    static let maxWaitingRequests = 64

    public func handleHTTP(_ exchange: HTTPExchange) {
        let now = clock.nowMillis()
        let api: CompanionREST.API
        switch CompanionREST.route(method: exchange.method, path: exchange.path, isWebSocketPath: exchange.isWebSocketUpgradePath) {
        case .health:
            return exchange.respond(
                CompanionREST.json(200, HealthBody(timestamp: CompanionTimestamp.string(now), sessions: sessions.table.all.count))
            )
        case .upgradeRequired: return exchange.respond(CompanionREST.answer(.upgradeRequired))
        case .notFound: return exchange.respond(CompanionREST.answer(.notFound(method: exchange.method, path: exchange.path)))
        case .api(let route): api = route
        }
        if let refusal = CompanionAuth.refusal(exchange.headers, token: authToken) { return exchange.respond(CompanionREST.answer(refusal)) }
        let deviceID = CompanionAuth.deviceID(for: exchange.headers)
        exchange.deviceID = deviceID
        exchange.userID = settings.userID
        if refusedDevices.contains(deviceID) { return exchange.respond(CompanionREST.answer(.deviceRevoked(deviceID: deviceID))) }
        withBody(exchange) { [self] body in
            switch api {
            case .health:
                let live = sessions.table.all.map(\.sessionID)
                exchange.respond(
                    CompanionREST.json(200, APIHealthBody(activeSessions: live, timestamp: CompanionTimestamp.string(clock.nowMillis())))
                )
            case .projects: exchange.respond(CompanionREST.json(200, projects.list()))
            case .startProject(let name): startProject(name, body: body, exchange)
            case .sessions: listSessions(exchange)
            case .continueSession: continueSession(body, deviceID: deviceID, exchange)
            case .describeSession(let id): describeSession(id, exchange)
            case .closeSession(let id, let stream): closeSession(id, stream: stream, exchange)
            case .ask: askOverHTTP(body, deviceID: deviceID, exchange)
            case .startStream: startStream(body, deviceID: deviceID, exchange)
            case .sendToStream(let id): sendToStream(id, body: body, deviceID: deviceID, exchange)
            case .answerPermission(let id):
                answerPermission(sessionID: id, body: body, deviceID: deviceID, name: CompanionAuth.deviceName(for: exchange.headers), exchange)
            case .fileContent: fileContent(body, exchange)
            case .chat: postChat(body, exchange)
            case .killChat: killChat(body, exchange)
            case .storedMessage(let id): storedMessage(id, exchange)
            case .notFound: exchange.respond(CompanionREST.answer(.notFound(method: exchange.method, path: exchange.path)))
            }
        }
    }

    /// Reads the file off the loop, answers back on it.
    private func fileContent(_ body: CompanionFields, _ exchange: HTTPExchange) {
        let files = CompanionFiles(projects: projects)
        let bound = LoopBound(exchange, loop: loop)
        DispatchQueue.global().async {
            let response: HTTPResponse
            switch files.read(body) {
            case .success(let answer): response = CompanionREST.json(200, answer)
            case .failure(let refusal): response = CompanionREST.json(refusal.status, refusal.body)
            }
            bound.loop.execute { bound.value.respond(response) }
        }
    }

    /// The request's JSON object body (`{}` when there is none); 400, 413 or 500 otherwise.
    private func withBody(_ exchange: HTTPExchange, _ handle: @escaping (CompanionFields) -> Void) {
        guard CompanionREST.hasBody(method: exchange.method, contentLength: exchange.contentLength) else { return handle(CompanionFields()) }
        let limit = settings.maxFrameBytes
        exchange.receiveBody(limit: limit, into: .memory) { received in
            switch CompanionREST.body(received, limit: limit) {
            case .success(let body): handle(body)
            case .failure(let error): exchange.respond(CompanionREST.answer(error))
            }
        }
    }

    /// `POST /api/projects/:name/start`: every answer carries `success`, a whole `session` and
    /// `message` (the app decodes it whatever the status).
    private func startProject(_ name: String, body: CompanionFields, _ exchange: HTTPExchange) {
        let place: String
        switch projects.project(named: name) {
        case .failure(let refusal): return exchange.respond(CompanionREST.projectStartRefusal(name, refusal))
        case .success(let found): place = found
        }
        let requested = body.string("sessionId")
        sessions.open(directory: place, requestedID: requested) { result in
            switch result {
            case .failure(let error): exchange.respond(CompanionREST.projectStartRefusal(name, error))
            case .success(let session): exchange.respond(CompanionREST.projectStarted(name, place: place, session: session, requestedID: requested))
            }
        }
    }

    private func listSessions(_ exchange: HTTPExchange) {
        hub.history.summaries(userID: settings.userID, limit: 500) { [self] result in
            guard case .success(let stored) = result else { return exchange.respond(CompanionREST.answer(.sessionsUnreadable)) }
            exchange.respond(CompanionREST.sessionList(stored) { sessions.table.session(conversationID: $0) })
        }
    }

    private func describeSession(_ sessionID: String, _ exchange: HTTPExchange) {
        if let live = sessions.session(sessionID) {
            return exchange.respond(
                CompanionREST.sessionDescription(live.sessionID, directory: live.workingDirectory, status: "running", createdAt: live.createdAt)
            )
        }
        guard CompanionSessionRegistry.isValidSessionID(sessionID) else { return exchange.respond(CompanionREST.answer(.sessionNotFound(sessionID))) }
        hub.conversations.find(ConversationKey(CompanionKeys.session, sessionID), userID: settings.userID) { result in
            guard case .success(let conversation?) = result else { return exchange.respond(CompanionREST.answer(.sessionNotFound(sessionID))) }
            let directory = conversation.workingDirectory ?? ""
            exchange.respond(CompanionREST.sessionDescription(sessionID, directory: directory, status: "stopped", createdAt: conversation.createdAt))
        }
    }

    private func closeSession(_ sessionID: String, stream: Bool, _ exchange: HTTPExchange) {
        guard let session = sessions.remove(sessionID) else {
            let missing = SessionClosed(success: false, sessionId: nil, message: "Session not found")
            return exchange.respond(stream ? CompanionREST.json(200, missing) : CompanionREST.answer(.sessionNotFound(sessionID)))
        }
        hub.turns.abort(conversationID: session.conversationID, reason: "the session was closed")
        let message = stream ? "Session closed" : "Session '\(sessionID)' is being stopped"
        exchange.respond(CompanionREST.json(200, SessionClosed(success: true, sessionId: sessionID, message: message)))
    }

    /// `POST /api/sessions/continue`: every documented status and body; continuing brings the
    /// device to the foreground.
    private func continueSession(_ body: CompanionFields, deviceID: String, _ exchange: HTTPExchange) {
        let request: ContinueBody
        switch ContinueBody.read(body) {
        case .failure(let error): return exchange.respond(CompanionREST.answer(error))
        case .success(let read): request = read
        }
        sessions.find(request.sessionId) { [self] result in
            switch result {
            case .failure(let error): exchange.respond(CompanionREST.answer(error))
            case .success(nil): exchange.respond(CompanionREST.answer(.continueNotFound))
            case .success(let session?):
                guard (try? projects.directory(request.workingDirectory)) == session.workingDirectory else {
                    let mismatch = WorkingDirectoryMismatch(expected: session.workingDirectory, provided: request.workingDirectory)
                    return exchange.respond(CompanionREST.json(400, mismatch))
                }
                sessions.setBackgrounded(sessionID: session.sessionID, false)
                hub.presence.signal(.foregrounded, deviceID: deviceID)
                exchange.respond(CompanionREST.sessionContinued(sessions.session(session.sessionID) ?? session))
            }
        }
    }
}
