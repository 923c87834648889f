import Foundation
import RelayCore
import RelayTransport

/// The REST calls that run a turn, some of them waiting for its answer.
extension CompanionDownstream {
    func askOverHTTP(_ body: [String: JSONValue], deviceID: String, _ exchange: HTTPExchange) {
        guard let text = prompt(in: body, exchange) else { return }
        commandSession(id: body["sessionId"]?.stringValue, directory: body["workingDirectory"]?.stringValue, fallback: nil) { [self] result in
            switch result {
            case .failure(let error): refuse(error, exchange)
            case .success(let session):
                waitForAnswer(text, in: session, deviceID: deviceID, exchange) { answer, duration in
                    Self.result(answer.content, session: session.sessionID, duration: duration)
                }
            }
        }
    }

    func startStream(_ body: [String: JSONValue], deviceID: String, _ exchange: HTTPExchange) {
        let text = body["prompt"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        if let text, text.utf8.count > Self.maxPromptBytes { return exchange.respond(json(413, ["error": .string("the prompt is too large")])) }
        let place: String
        do { place = try directory(body["workingDirectory"]?.stringValue) } catch { return refuse(error, exchange) }
        openSession(directory: place, requestedID: nil) { [self] result in
            switch result {
            case .failure(let error): refuse(error, exchange)
            case .success(let session):
                exchange.respond(
                    json(200, ["sessionId": .string(session.sessionID), "success": .bool(true), "message": .string("Session ready for commands")])
                )
                if let text { run(text, in: session, clientID: "stream:" + Identifiers.newUUID(), deviceID: deviceID) { _ in } }
            }
        }
    }

    func sendToStream(_ sessionID: String, body: [String: JSONValue], deviceID: String, _ exchange: HTTPExchange) {
        guard let text = prompt(in: body, exchange) else { return }
        findSession(sessionID) { [self] result in
            switch result {
            case .failure(let error): refuse(error, exchange)
            case .success(nil):
                exchange.respond(
                    json(
                        404,
                        [
                            "error": .string("Session not found"),
                            "message": .string("Session '\(sessionID.prefix(128))' does not exist or has expired"),
                        ]
                    )
                )
            case .success(let session?):
                waitForAnswer(text, in: session, deviceID: deviceID, exchange) { answer, duration in
                    .object([
                        "sessionId": .string(session.sessionID), "success": .bool(true),
                        "response": Self.result(answer.content, session: session.sessionID, duration: duration),
                    ])
                }
            }
        }
    }

    private func prompt(in body: [String: JSONValue], _ exchange: HTTPExchange) -> String? {
        guard let text = body["prompt"]?.stringValue, !text.isEmpty else {
            exchange.respond(json(400, ["error": .string("Prompt is required")]))
            return nil
        }
        guard text.utf8.count <= Self.maxPromptBytes else {
            exchange.respond(json(413, ["error": .string("the prompt is larger than \(Self.maxPromptBytes / 1024) KB")]))
            return nil
        }
        return text
    }

    private func refuse(_ error: CompanionError, _ exchange: HTTPExchange) {
        switch error.code {
        case "INVALID_WORKING_DIRECTORY": exchange.respond(json(403, ["error": .string("Invalid working directory: \(error.message)")]))
        case "SESSION_LIMIT": exchange.respond(json(429, ["error": .string("Too many sessions"), "message": .string(error.message)]))
        case "INVALID_MESSAGE": exchange.respond(json(400, ["error": .string(error.message)]))
        default: exchange.respond(json(500, ["error": .string(error.message)]))
        }
    }

    /// Runs `text` in the session and answers the request once the turn ended (the turn goes on
    /// if the client leaves; at most `maxWaitingRequests` wait at once).
    private func waitForAnswer(
        _ text: String,
        in session: Session,
        deviceID: String,
        _ exchange: HTTPExchange,
        body: @escaping (ChatEvent, JSONValue) -> JSONValue
    ) {
        guard waitingRequests < Self.maxWaitingRequests else {
            return exchange.respond(json(503, ["error": .string("too many requests are waiting for answers; try again later")]))
        }
        waitingRequests += 1
        let startedAt = clock.nowMillis()
        run(
            text,
            in: session,
            clientID: "http:" + Identifiers.newUUID(),
            deviceID: deviceID,
            failed: { [self] error in
                waitingRequests -= 1
                exchange.respond(json(error.code == "QUEUE_FULL" ? 429 : 500, ["error": .string(error.message), "code": .string(error.code)]))
            },
            started: { [self] runID in
                hub.turns.whenEnded(runID: runID) { [self] end in
                    waitingRequests -= 1
                    switch end {
                    case .answered(let answer):
                        exchange.respond(.json(200, body(answer, .double(Double(max(0, answer.timestampMillis - startedAt)))).encoded()))
                    case .failed(let failure):
                        exchange.respond(json(500, ["error": .string("Failed to execute command: \(failure.reason)")]))
                    }
                }
            }
        )
    }
}
