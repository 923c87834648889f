import Foundation
import RelayCore
import RelayTransport

extension CompanionDownstream {
    /// Requests waiting for an answer at once, at most.
    static let maxWaitingRequests = 64

    public func handleHTTP(_ exchange: HTTPExchange) {
        let path = exchange.path
        if exchange.method == "GET", path == "/health" {
            return exchange.respond(
                json(
                    200,
                    [
                        "status": .string("healthy"), "version": .string(CompanionWire.serverVersion),
                        "timestamp": .string(CompanionWire.timestamp(clock.nowMillis())), "sessions": .int(Int64(sessions.all.count)),
                    ]
                )
            )
        }
        if exchange.isWebSocketUpgradePath {
            return exchange.respond(
                json(426, ["error": .string("Upgrade Required"), "message": .string("this is the Companion WebSocket endpoint")])
            )
        }
        guard path.hasPrefix("/api/") else { return notFound(exchange) }
        guard isAuthorized(exchange.headers) else {
            let missing = exchange.headers.queryValue("token") == nil && exchange.headers.bearerToken == nil
            return exchange.respond(
                missing
                    ? json(401, ["error": .string("Authentication required"), "message": .string("Please provide a valid auth token")])
                    : json(401, ["error": .string("Invalid token"), "message": .string("The provided auth token is not valid")])
            )
        }
        let parts = path.dropFirst(5).split(separator: "/", omittingEmptySubsequences: false).map { String($0).removingPercentEncoding ?? String($0) }
        let deviceID = Self.deviceID(for: exchange.headers)
        withBody(exchange) { [self] body in
            switch (exchange.method, parts.count, parts.first) {
            case ("GET", 1, "health"):
                exchange.respond(
                    json(
                        200,
                        [
                            "status": .string("healthy"), "sessionCount": .int(Int64(sessions.all.count)),
                            "activeSessions": .array(sessions.all.map { .string($0.sessionID) }),
                            "timestamp": .string(CompanionWire.timestamp(clock.nowMillis())),
                        ]
                    )
                )
            case ("GET", 1, "projects"): listProjects(exchange)
            case ("POST", 3, "projects") where parts[2] == "start": startProject(parts[1], body: body, exchange)
            case ("GET", 1, "sessions"): listSessions(exchange)
            case ("POST", 2, "sessions") where parts[1] == "continue": continueSession(body, deviceID: deviceID, exchange)
            case ("GET", 2, "sessions"): describeSession(parts[1], exchange)
            case ("DELETE", 2, "sessions"), ("DELETE", 2, "stream"): closeSession(parts[1], stream: parts[0] == "stream", exchange)
            case ("POST", 1, "ask"): askOverHTTP(body, deviceID: deviceID, exchange)
            case ("POST", 2, "stream") where parts[1] == "start": startStream(body, deviceID: deviceID, exchange)
            case ("POST", 2, "stream"): sendToStream(parts[1], body: body, deviceID: deviceID, exchange)
            default: notFound(exchange)
            }
        }
    }

    func json(_ status: Int, _ fields: [String: JSONValue]) -> HTTPResponse { .json(status, JSONValue.object(fields).encoded()) }

    private func notFound(_ exchange: HTTPExchange) {
        exchange.respond(
            json(
                404,
                ["error": .string("Not found"), "message": .string("\(exchange.method) \(exchange.path.prefix(200)) is not a Companion endpoint")]
            )
        )
    }

    /// The request's JSON object body (`{}` when there is none); 400 or 413 otherwise.
    private func withBody(_ exchange: HTTPExchange, _ handle: @escaping ([String: JSONValue]) -> Void) {
        guard exchange.method == "POST" || exchange.method == "PUT", (exchange.contentLength ?? 0) > 0 else { return handle([:]) }
        exchange.receiveBody(limit: settings.maxFrameBytes, into: .memory) { [self] result in
            switch result {
            case .failure(.tooLarge):
                exchange.respond(
                    json(413, ["error": .string("Payload too large"), "message": .string("the body is larger than \(settings.maxFrameBytes) bytes")])
                )
            case .failure:
                exchange.respond(json(400, ["error": .string("Bad request"), "message": .string("the body could not be read")]))
            case .success(.bytes(let bytes)):
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0a || $0 == 0x0d || $0 == 0x09 }) { return handle([:]) }
                guard case .object(let object)? = JSONValue.parse(bytes) else {
                    return exchange.respond(json(400, ["error": .string("Invalid JSON"), "message": .string("the body must be a JSON object")]))
                }
                handle(object)
            case .success(.file):
                exchange.respond(json(500, ["error": .string("Internal error")]))
            }
        }
    }

    private func listProjects(_ exchange: HTTPExchange) {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: projectsRoot)) ?? []).filter { name in
            var isDirectory: ObjCBool = false
            return !name.hasPrefix(".") && FileManager.default.fileExists(atPath: projectsRoot + "/" + name, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }.sorted()
        let projects = names.map { JSONValue.object(["name": .string($0), "path": .string(projectsRoot + "/" + $0), "type": .string("folder")]) }
        exchange.respond(json(200, ["basePath": .string(projectsRoot), "projects": .array(projects)]))
    }

    /// `POST /api/projects/:name/start`: every answer carries `success`, a whole `session` and `message` (the app decodes it whatever the status).
    private func startProject(_ name: String, body: [String: JSONValue], _ exchange: HTTPExchange) {
        func refuse(_ status: Int, _ error: String, _ message: String) {
            let session: JSONValue = .object([
                "sessionId": .string(""), "projectName": .string(name), "projectPath": .string(""), "status": .string("error"),
                "startedAt": .string(""),
            ])
            exchange.respond(
                json(
                    status,
                    ["success": .bool(false), "error": .string(error), "message": .string(message), "code": .string(error), "session": session]
                )
            )
        }
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/"), !name.contains("\0"), name.utf8.count <= 255 else {
            return refuse(403, "Access denied", "Invalid project path")
        }
        let place = projectsRoot + "/" + name
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: place, isDirectory: &isDirectory), isDirectory.boolValue else {
            return refuse(404, "Project not found", "Project '\(name.prefix(200))' does not exist")
        }
        let requested = body["sessionId"]?.stringValue
        openSession(directory: place, requestedID: requested) { [self] result in
            switch result {
            case .failure(let error) where error.code == "SESSION_LIMIT": refuse(429, "Too many sessions", error.message)
            case .failure(let error): refuse(error.code == "INVALID_MESSAGE" ? 400 : 500, error.code, error.message)
            case .success(let session):
                let continued = requested != nil && requested == session.sessionID
                exchange.respond(
                    json(
                        200,
                        [
                            "success": .bool(true), "continued": .bool(continued),
                            "message": .string(continued ? "Continuing session for project '\(name)'" : "Session started for project '\(name)'"),
                            "session": .object([
                                "sessionId": .string(session.sessionID), "projectName": .string(name), "projectPath": .string(place),
                                "status": .string("running"),
                                "startedAt": .string(CompanionWire.timestamp(session.createdAt)),
                            ]),
                        ]
                    )
                )
            }
        }
    }

    private func listSessions(_ exchange: HTTPExchange) {
        hub.history.summaries(userID: settings.userID, limit: 500) { [self] result in
            guard case .success(let stored) = result else {
                return exchange.respond(json(500, ["error": .string("the sessions could not be read")]))
            }
            let details = stored.map { summary -> JSONValue in
                let (conversation, count) = (summary.conversation, summary.messageCount)
                let live = sessions.session(conversationID: conversation.id)
                return .object([
                    "sessionId": .string(live?.sessionID ?? conversation.key(in: CompanionKeys.session) ?? conversation.id),
                    "workingDirectory": .string(conversation.workingDirectory ?? ""), "live": .bool(live != nil),
                    "backgrounded": .bool(live?.backgrounded ?? false),
                    "createdAt": .int(conversation.createdAt), "lastActivity": .int(max(live?.lastActivity ?? 0, conversation.updatedAt)),
                    "messageCount": .int(Int64(count)),
                ])
            }
            exchange.respond(json(200, ["sessions": .array(details.compactMap { $0["sessionId"] }), "details": .array(details)]))
        }
    }

    private func describeSession(_ sessionID: String, _ exchange: HTTPExchange) {
        let notFound = json(
            404,
            ["error": .string("Session not found"), "message": .string("Session '\(sessionID.prefix(128))' does not exist or has expired")]
        )
        if let live = sessions.session(sessionID) {
            return exchange.respond(json(200, description(live.sessionID, live.workingDirectory, "running", live.createdAt)))
        }
        guard Self.validSessionID(sessionID) else { return exchange.respond(notFound) }
        hub.conversations.find(ConversationKey(CompanionKeys.session, sessionID), userID: settings.userID) { [self] result in
            guard case .success(let conversation?) = result else { return exchange.respond(notFound) }
            exchange.respond(json(200, description(sessionID, conversation.workingDirectory ?? "", "stopped", conversation.createdAt)))
        }
    }

    private func description(_ sessionID: String, _ directory: String, _ status: String, _ createdAt: Int64) -> [String: JSONValue] {
        [
            "sessionId": .string(sessionID), "projectPath": .string(directory), "status": .string(status),
            "startedAt": .string(CompanionWire.timestamp(createdAt)), "stoppedAt": .null, "error": .null,
        ]
    }

    private func closeSession(_ sessionID: String, stream: Bool, _ exchange: HTTPExchange) {
        guard let session = sessions.remove(sessionID) else {
            return exchange.respond(
                stream
                    ? json(200, ["success": .bool(false), "message": .string("Session not found")])
                    : json(
                        404,
                        [
                            "error": .string("Session not found"),
                            "message": .string("Session '\(sessionID.prefix(128))' does not exist or has expired"),
                        ]
                    )
            )
        }
        hub.turns.abort(conversationID: session.conversationID, reason: "the session was closed")
        exchange.respond(
            json(
                200,
                [
                    "success": .bool(true), "sessionId": .string(sessionID),
                    "message": .string(stream ? "Session closed" : "Session '\(sessionID)' is being stopped"),
                ]
            )
        )
    }

    /// `POST /api/sessions/continue`: every documented status and body; continuing brings the device to the foreground.
    private func continueSession(_ body: [String: JSONValue], deviceID: String, _ exchange: HTTPExchange) {
        guard let sessionID = body["sessionId"]?.stringValue, !sessionID.isEmpty, let given = body["workingDirectory"]?.stringValue, !given.isEmpty
        else {
            return exchange.respond(json(400, ["error": .string("sessionId and workingDirectory are required")]))
        }
        findSession(sessionID) { [self] result in
            switch result {
            case .failure(let error) where error.code == "SESSION_LIMIT":
                exchange.respond(json(429, ["error": .string("Too many sessions"), "message": .string(error.message)]))
            case .failure(let error): exchange.respond(json(500, ["error": .string(error.message)]))
            case .success(nil): exchange.respond(json(404, ["error": .string("Session not found")]))
            case .success(let session?):
                guard (try? directory(given)) == session.workingDirectory else {
                    return exchange.respond(
                        json(
                            400,
                            [
                                "error": .string("Working directory mismatch"), "expected": .string(session.workingDirectory),
                                "provided": .string(given),
                            ]
                        )
                    )
                }
                sessions.setBackgrounded(session.sessionID, false, at: clock.nowMillis())
                hub.presence.signal(.foregrounded, deviceID: deviceID)
                let current = sessions.session(session.sessionID) ?? session
                exchange.respond(
                    json(
                        200,
                        [
                            "success": .bool(true), "sessionId": .string(current.sessionID),
                            "conversationStarted": .bool(current.conversationStarted),
                            "workingDirectory": .string(current.workingDirectory),
                            "initialPrompt": current.initialPrompt.map(JSONValue.string) ?? .null,
                            "createdAt": .int(current.createdAt), "lastActivity": .int(current.lastActivity),
                        ]
                    )
                )
            }
        }
    }
}
