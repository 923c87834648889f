import CompanionWire
import RelayCore
import RelayTransport

/// The REST calls that run a turn, some of them waiting for its answer.
extension CompanionDownstream {
    func askOverHTTP(_ body: CompanionFields, deviceID: String, _ exchange: HTTPExchange) {
        let request: PromptBody
        switch PromptBody.read(body) {
        case .failure(let error): return exchange.respond(CompanionREST.answer(error))
        case .success(let read): request = read
        }
        sessions.forCommand(id: request.sessionId, directory: request.workingDirectory, fallback: nil) { [self] result in
            switch result {
            case .failure(let error): exchange.respond(CompanionREST.answer(error))
            case .success(let session):
                waitForAnswer(request.prompt, in: session, deviceID: deviceID, exchange) { answer, duration in
                    CompanionREST.json(200, CLIResult(result: answer.content, sessionID: session.sessionID, durationMillis: duration))
                }
            }
        }
    }

    func startStream(_ body: CompanionFields, deviceID: String, _ exchange: HTTPExchange) {
        let request: StreamStartBody
        switch StreamStartBody.read(body) {
        case .failure(let error): return exchange.respond(CompanionREST.answer(error))
        case .success(let read): request = read
        }
        let place: String
        do { place = try projects.directory(request.workingDirectory) } catch { return exchange.respond(CompanionREST.answer(error)) }
        sessions.open(directory: place, requestedID: nil) { [self] result in
            switch result {
            case .failure(let error): exchange.respond(CompanionREST.answer(error))
            case .success(let session):
                exchange.respond(CompanionREST.json(200, StreamReady(sessionId: session.sessionID)))
                guard let text = request.prompt else { return }
                run(text, in: session, clientID: CompanionOrigin.stream.clientID(streamID: Identifiers.newUUID()), deviceID: deviceID) { _ in }
            }
        }
    }

    func sendToStream(_ sessionID: String, body: CompanionFields, deviceID: String, _ exchange: HTTPExchange) {
        let request: PromptBody
        switch PromptBody.read(body) {
        case .failure(let error): return exchange.respond(CompanionREST.answer(error))
        case .success(let read): request = read
        }
        sessions.find(sessionID) { [self] result in
            switch result {
            case .failure(let error): exchange.respond(CompanionREST.answer(error))
            case .success(nil): exchange.respond(CompanionREST.answer(.sessionNotFound(sessionID)))
            case .success(let session?):
                waitForAnswer(request.prompt, in: session, deviceID: deviceID, exchange) { answer, duration in
                    let result = CLIResult(result: answer.content, sessionID: session.sessionID, durationMillis: duration)
                    return CompanionREST.json(200, StreamAnswer(sessionId: session.sessionID, response: result))
                }
            }
        }
    }

    /// Runs `text` in the session and answers the request once the turn ended (the turn goes on
    /// if the client leaves; at most `maxWaitingRequests` wait at once).
    private func waitForAnswer(
        _ text: String,
        in session: CompanionSessions.Session,
        deviceID: String,
        _ exchange: HTTPExchange,
        answer: @escaping (ChatEvent, Double) -> HTTPResponse
    ) {
        guard waitingRequests < Self.maxWaitingRequests else { return exchange.respond(CompanionREST.answer(.tooManyWaiting)) }
        waitingRequests += 1
        let startedAt = clock.nowMillis()
        run(
            text,
            in: session,
            clientID: CompanionOrigin.restClientID(Identifiers.newUUID()),
            deviceID: deviceID,
            failed: { [self] error in
                waitingRequests -= 1
                exchange.respond(CompanionREST.json(error.code.httpStatus, ErrorBody(error.message, code: error.code.rawValue)))
            },
            started: { [self] runID in
                hub.turns.whenEnded(runID: runID) { [self] end in
                    waitingRequests -= 1
                    switch end {
                    case .answered(let event): exchange.respond(answer(event, Double(max(0, event.timestampMillis - startedAt))))
                    case .failed(let failure): exchange.respond(CompanionREST.answer(.turnFailed(reason: failure.reason)))
                    }
                }
            }
        )
    }
}
