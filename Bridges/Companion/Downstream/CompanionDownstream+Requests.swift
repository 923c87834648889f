import Foundation
import RelayCore

extension CompanionDownstream {
    static let maxPromptBytes = 256 * 1024
    static let maxSubscribedSessions = 100

    func reply(_ type: String, _ request: CompanionRequest, _ data: [String: JSONValue], on connection: CompanionConnection) {
        connection.send(CompanionWire.frame(type, requestID: request.requestID, at: clock.nowMillis(), data))
    }

    func pong(_ request: CompanionRequest, on connection: CompanionConnection) {
        var data: [String: JSONValue] = ["serverTime": .string(CompanionWire.timestamp(clock.nowMillis()))]
        if let sent = request.data["timestamp"] { data["clientTimestamp"] = sent }
        reply("pong", request, data, on: connection)
    }

    /// `subscribe {events, sessionIds}`: the socket holds those sessions, hears `subscribed`, then
    /// gets what the device missed of them.
    func subscribe(_ request: CompanionRequest, on connection: CompanionConnection) throws(CompanionError) {
        let events = try strings("events", in: request, required: true)
        let ids = try strings("sessionIds", in: request, required: false)
        guard ids.count <= Self.maxSubscribedSessions else { throw .invalid("at most \(Self.maxSubscribedSessions) sessionIds") }
        var remaining = ids.count
        let finish = { [self] in
            reply(
                "subscribed",
                request,
                ["events": .array(events.map(JSONValue.string)), "sessionIds": .array(ids.map(JSONValue.string)), "success": .bool(true)],
                on: connection
            )
            hub.queue.drain(deviceID: connection.deviceID, to: connection)
        }
        guard remaining > 0 else { return finish() }
        for id in ids {
            findSession(id) { [self] result in
                if case .success(let session?) = result { hold(session, on: connection) }
                remaining -= 1
                if remaining == 0 { finish() }
            }
        }
    }

    private func strings(_ key: String, in request: CompanionRequest, required: Bool) throws(CompanionError) -> [String] {
        switch request.data[key] {
        case nil, .null?:
            if required { throw .invalid("\(key) must be an array of strings") }
            return []
        case .array(let items)?:
            var out: [String] = []
            for item in items {
                guard let text = item.stringValue else { throw .invalid("\(key) must be an array of strings") }
                out.append(text)
            }
            return out
        default:
            throw .invalid("\(key) must be an array of strings")
        }
    }

    private func prompt(_ key: String, in request: CompanionRequest) throws(CompanionError) -> String {
        let text = try request.requiredString(key)
        guard text.utf8.count <= Self.maxPromptBytes else {
            throw CompanionError(code: "PAYLOAD_TOO_LARGE", message: "\(key) is larger than \(Self.maxPromptBytes / 1024) KB")
        }
        return text
    }

    /// `claudeCommand {command, projectPath?, sessionId?}`: a turn answered with `claudeResponse`;
    /// every failure is a `claudeResponse` too (an `error` frame would leave the app waiting).
    func command(_ request: CompanionRequest, on connection: CompanionConnection) throws(CompanionError) {
        let requestID = request.requestID ?? Identifiers.newUUID()
        let sessionHint = request.string("sessionId")
        let failed = { [self] (message: String, session: String?) in
            connection.send(
                CompanionWire.frame(
                    "claudeResponse",
                    requestID: requestID,
                    at: clock.nowMillis(),
                    ["content": .string(""), "success": .bool(false), "sessionId": session.map(JSONValue.string) ?? .null, "error": .string(message)]
                )
            )
        }
        let text: String
        do { text = try prompt("command", in: request) } catch { return failed(error.message, sessionHint) }
        commandSession(id: sessionHint, directory: request.string("projectPath"), fallback: connection.workingDirectory) { [self] result in
            switch result {
            case .failure(let error): failed(error.message, sessionHint)
            case .success(let session):
                hold(session, on: connection, command: true)
                run(text, in: session, clientID: "cmd:" + requestID, from: connection) { failed($0.message, session.sessionID) }
            }
        }
    }

    /// `ask {prompt, workingDirectory?, sessionId?}`: a turn answered with `askResponse`.
    func ask(_ request: CompanionRequest, on connection: CompanionConnection) throws(CompanionError) {
        let requestID = request.requestID ?? Identifiers.newUUID()
        let failed = { [self] (message: String) in
            connection.send(
                CompanionWire.frame("askResponse", requestID: requestID, at: clock.nowMillis(), ["success": .bool(false), "error": .string(message)])
            )
        }
        let text = try prompt("prompt", in: request)
        commandSession(id: request.string("sessionId"), directory: request.string("workingDirectory"), fallback: connection.workingDirectory) {
            [self] result in
            switch result {
            case .failure(let error): failed(error.message)
            case .success(let session):
                hold(session, on: connection, command: true)
                run(text, in: session, clientID: "ask:" + requestID, from: connection) { failed($0.message) }
            }
        }
    }

    /// `streamStart {sessionId?, workingDirectory?, initialPrompt?|prompt?}`: the session, its
    /// queued events, and the prompt answered.
    func streamStart(_ request: CompanionRequest, on connection: CompanionConnection) throws(CompanionError) {
        let given = try request.optionalString("prompt")
        let initial = try request.optionalString("initialPrompt")
        let text = given ?? initial
        if let text, text.utf8.count > Self.maxPromptBytes { throw CompanionError(code: "PAYLOAD_TOO_LARGE", message: "the prompt is too large") }
        commandSession(
            id: try request.optionalString("sessionId"),
            directory: try request.optionalString("workingDirectory"),
            fallback: connection.workingDirectory
        ) {
            [self] result in
            switch result {
            case .failure(let error): fail(error, request, on: connection)
            case .success(let session):
                hold(session, on: connection, command: text != nil)
                if let initial, !initial.isEmpty { sessions.setInitialPrompt(session.sessionID, initial) }
                reply(
                    "streamStarted",
                    request,
                    [
                        "sessionId": .string(session.sessionID), "sessionName": .string((session.workingDirectory as NSString).lastPathComponent),
                        "workingDirectory": .string(session.workingDirectory),
                    ],
                    on: connection
                )
                hub.queue.drain(deviceID: connection.deviceID, to: connection)
                if let text, !text.isEmpty {
                    run(text, in: session, clientID: "stream:" + (request.requestID ?? Identifiers.newUUID()), from: connection) { [self] error in
                        fail(error, request, on: connection)
                    }
                }
            }
        }
    }

    /// `streamSend {sessionId, prompt}` to a session that exists.
    func streamSend(_ request: CompanionRequest, on connection: CompanionConnection) throws(CompanionError) {
        let sessionID = try request.requiredString("sessionId")
        let text = try prompt("prompt", in: request)
        findSession(sessionID) { [self] result in
            switch result {
            case .failure(let error): fail(error, request, on: connection)
            case .success(nil): fail(.invalidSession(sessionID), request, on: connection)
            case .success(let session?):
                hold(session, on: connection, command: true)
                reply("sessionStatus", request, status(of: session, "processing"), on: connection)
                run(text, in: session, clientID: "stream:" + (request.requestID ?? Identifiers.newUUID()), from: connection) { [self] error in
                    fail(error, request, on: connection)
                }
            }
        }
    }

    func status(of session: Session, _ status: String) -> [String: JSONValue] {
        [
            "sessionId": .string(session.sessionID), "status": .string(status),
            "lastActivity": .string(CompanionWire.timestamp(session.lastActivity)),
            "messageCount": .int(session.conversationStarted ? 1 : 0),
        ]
    }

    /// `streamClose {sessionId}`: this socket lets the session go (it stays; its events queue).
    func streamClose(_ request: CompanionRequest, on connection: CompanionConnection) throws(CompanionError) {
        let sessionID = try request.requiredString("sessionId")
        if let session = sessions.session(sessionID) {
            connection.held.remove(session.conversationID)
        } else if let conversation = hub.conversations.cached(ConversationKey(CompanionKeys.session, sessionID), userID: settings.userID) {
            connection.held.remove(conversation.id)
        } else {
            connection.held.remove(sessionID)
        }
    }

    func setWorkingDirectory(_ request: CompanionRequest, on connection: CompanionConnection) throws(CompanionError) {
        let place = try directory(try request.requiredString("workingDirectory"))
        connection.workingDirectory = place
        reply("workingDirectorySet", request, ["workingDirectory": .string(place), "success": .bool(true)], on: connection)
    }

    /// `registerDevice {deviceToken, deviceInfo}` (guide) or `{token, platform}` (the app): the APNs
    /// token is kept for pushes to this device.
    func registerDevice(_ request: CompanionRequest, on connection: CompanionConnection) throws(CompanionError) {
        let guideToken = try request.optionalString("deviceToken")
        let appToken = try request.optionalString("token")
        guard let token = guideToken ?? appToken, PushTarget.isAPNsToken(token) else {
            logger.info(
                "push target rejected: not an APNs token in hex",
                metadata: ["protocol": "companion", "device": "\(connection.deviceID)", "length": "\((guideToken ?? appToken)?.utf8.count ?? 0)"]
            )
            throw .invalid("deviceToken must be the device's APNs token in hex")
        }
        let platform = request.string("platform") ?? request.string("deviceInfo") ?? request.data["deviceInfo"]?["platform"]?.stringValue ?? "ios"
        let deviceID = connection.deviceID
        hub.pushes.register(deviceID: deviceID, kind: .apns, token: token.lowercased(), platform: String(platform.prefix(32))) { [self] result in
            switch result {
            case .success:
                logger.info(
                    "push target registered",
                    metadata: ["protocol": "companion", "device": "\(deviceID)", "kind": "apns", "platform": "\(platform.prefix(32))"]
                )
                reply(
                    "deviceRegistered",
                    request,
                    ["success": .bool(true), "message": .string("Device registered for push notifications")],
                    on: connection
                )
            case .failure: fail(CompanionError(code: "STORE_FAILED", message: "the device token could not be stored"), request, on: connection)
            }
        }
    }

    /// `client_backgrounding`/`sessionBackgrounded`, `sessionForegrounded`: the device's presence,
    /// and the named session's (or this socket's sessions') idle allowance.
    func background(_ request: CompanionRequest, on connection: CompanionConnection, backgrounded: Bool) throws(CompanionError) {
        hub.presence.signal(backgrounded ? .backgrounded : .foregrounded, deviceID: connection.deviceID)
        if let sessionID = try request.optionalString("sessionId"), !sessionID.isEmpty, let session = sessions.session(sessionID) {
            sessions.setBackgrounded(sessionID, backgrounded, at: clock.nowMillis())
            if !backgrounded { connection.held.insert(session.conversationID) }
        } else {
            for conversationID in connection.held { setBackgrounded(conversationID, backgrounded) }
        }
        if !backgrounded { hub.queue.drain(deviceID: connection.deviceID, to: connection) }
    }

    /// Submits a turn in the session; `failed` hears why when it could not start.
    func run(
        _ text: String,
        in session: Session,
        clientID: String,
        from connection: CompanionConnection,
        failed: @escaping (CompanionError) -> Void
    ) {
        run(text, in: session, clientID: clientID, deviceID: connection.deviceID, failed: failed)
    }

    /// Submits a turn for `deviceID`; `started` hears its run id once it is stored.
    func run(
        _ text: String,
        in session: Session,
        clientID: String,
        deviceID: String,
        failed: @escaping (CompanionError) -> Void,
        started: ((String) -> Void)? = nil
    ) {
        let message = UserMessage(
            conversationID: session.conversationID,
            userID: settings.userID,
            deviceID: deviceID,
            clientID: clientID,
            content: text
        )
        let refuse = { (code: String, message: String) in failed(CompanionError(code: code, message: message, sessionID: session.sessionID)) }
        hub.turns.submit(message, policy: settings.turnPolicy) { outcome in
            switch outcome {
            case .accepted(_, let runID, _), .duplicate(.active, let runID, _): started?(runID)
            case .duplicate(.finalized, _, _): refuse("INVALID_MESSAGE", "this request was already answered; send it again with a new requestId")
            case .duplicate: refuse("INVALID_MESSAGE", "this request failed; send it again with a new requestId")
            case .mismatch: refuse("INVALID_MESSAGE", "requestId reused with a different command")
            case .queueFull: refuse("QUEUE_FULL", "too many commands are waiting in this session (at most \(self.settings.maxQueuedCommands))")
            case .rejected, .missingAsset, .storeFailed: refuse("STORE_FAILED", "the command could not be stored")
            }
        }
    }
}
