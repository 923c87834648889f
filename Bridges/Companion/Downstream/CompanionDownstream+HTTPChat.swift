import CompanionWire
import Dispatch
import RelayCore
import RelayTransport

/// The newest Companion app's chat (builds since 2025-08-06, companion-http.md): `POST /api/chat`
/// is acknowledged at once and its answer reaches the app only as an APNs push, one per turn
/// (`CompanionAnswerPush`); `POST /api/chat/kill` stops a turn (no push for it); `GET
/// /api/messages/:id` hands out an answer too large for its push. The app sends no device id:
/// its APNs token is the device (`companion-http:<hash>`).
extension CompanionDownstream {
    static let httpDeviceProtocol = "companion-http"
    /// A posted message's client id is this and the request id its acknowledgement gave.
    static let httpClientPrefix = "http_"
    static func httpDeviceID(token: String) -> String { "companion-http:" + Digest.sha256Hex(token).prefix(16) }

    func postChat(_ body: CompanionFields, _ exchange: HTTPExchange) {
        let post: HTTPChatPost
        switch HTTPChatPost.read(body) {
        case .failure(let refusal): return exchange.respond(CompanionREST.json(400, refusal))
        case .success(let read): post = read
        }
        // Its answer could reach the app no other way.
        guard hub.pushes.isEnabled else {
            return exchange.respond(
                CompanionREST.json(
                    503,
                    HTTPChatRefusal(
                        "The relay cannot send push notifications ([push] with APNs is not set up), and this app gets answers only by push"
                    )
                )
            )
        }
        let deviceID = Self.httpDeviceID(token: post.deviceToken)
        exchange.deviceID = deviceID
        guard !refusedDevices.contains(deviceID) else {
            return exchange.respond(CompanionREST.json(403, HTTPChatRefusal("This device was revoked on the relay")))
        }
        let place: String
        do {
            place = post.projectPath == HTTPChatPost.workspace ? projects.root : try projects.directory(post.projectPath)
        } catch {
            return exchange.respond(CompanionREST.json(403, HTTPChatRefusal("projectPath is outside the projects root")))
        }
        let now = clock.nowMillis()
        if let earlier = httpChats.duplicate(of: post.fingerprint, now: now) {
            return exchange.respond(CompanionREST.json(200, earlier))
        }
        rememberDevice(deviceID, name: "Companion app (HTTP)", protocolName: Self.httpDeviceProtocol)
        hub.pushes.register(deviceID: deviceID, kind: .apns, token: post.deviceToken, platform: "ios") { [logger] result in
            if case .failure(let error) = result { logger.error("push target not stored", metadata: ["device": "\(deviceID)", "error": "\(error)"]) }
        }
        let open = { [self] (done: @escaping (Result<CompanionSessions.Session, CompanionError>) -> Void) in
            guard let id = post.sessionID else { return sessions.openNew(directory: place, requestedID: nil, completion: done) }
            sessions.find(id) { [self] found in
                switch found {
                case .success(let session?): done(.success(session))
                case .success(nil): sessions.openNew(directory: place, requestedID: id, completion: done)
                case .failure(let error): done(.failure(error))
                }
            }
        }
        open { [self] result in
            switch result {
            case .failure(let error): exchange.respond(CompanionREST.json(error.code.httpStatus, HTTPChatRefusal(error.message)))
            case .success(let session): start(post, in: session, deviceID: deviceID, exchange)
            }
        }
    }

    private func start(_ post: HTTPChatPost, in session: CompanionSessions.Session, deviceID: String, _ exchange: HTTPExchange) {
        let requestID = Identifiers.newUUID()
        run(
            post.message,
            in: session,
            readOnly: post.planning,
            clientID: Self.httpClientPrefix + requestID,
            deviceID: deviceID,
            failed: { error in exchange.respond(CompanionREST.json(error.code.httpStatus, HTTPChatRefusal(error.message))) },
            started: { [self] runID in
                let now = clock.nowMillis()
                let ack = HTTPChatAccepted(
                    sessionId: session.sessionID,
                    requestId: requestID,
                    messageId: "msg_" + Identifiers.newUUID(),
                    projectPath: post.projectPath,
                    timestamp: CompanionTimestamp.string(now)
                )
                httpChats.remember(post.fingerprint, ack, now: now)
                exchange.respond(CompanionREST.json(200, ack))
                httpChats.running[runID] = CompanionHTTPChats.Running(sessionID: session.sessionID, projectPath: post.projectPath, startedAt: now)
                heartbeat(runID)
                hub.turns.whenEnded(runID: runID) { [self] end in
                    heartbeat(runID, ended: true)
                    guard !httpChats.wasKilled(runID) else { return }
                    pushAnswer(end, post: post, session: session, requestID: requestID, deviceID: deviceID)
                }
            }
        )
    }

    /// Heartbeat interval while an HTTP turn runs (the app's project list shows it as progress).
    static let heartbeatMillis = 10_000

    /// Tells every open socket how the HTTP turn `runID` is doing, now and every 10 s until it
    /// ends (then once with `isProcessing: false`). The old app drops these frames unread.
    func heartbeat(_ runID: String, ended: Bool = false) {
        guard let run = httpChats.running[runID] else { return }
        let now = clock.nowMillis()
        let frame = CompanionJSON.encode(
            HTTPHeartbeat(
                sessionId: run.sessionID,
                projectPath: run.projectPath,
                activity: ended ? "Complete" : "Processing",
                elapsedSeconds: Int((now - run.startedAt) / 1000),
                isProcessing: !ended,
                timestamp: CompanionTimestamp.string(now)
            )
        )
        for socket in sockets.values { socket.send(frame) }
        if ended {
            httpChats.running.removeValue(forKey: runID)
        } else {
            loop.schedule(afterMillis: Self.heartbeatMillis) { [weak self] in self?.heartbeat(runID) }
        }
    }

    /// The turn's one push: its answer, or why there is none.
    private func pushAnswer(_ end: TurnEnd, post: HTTPChatPost, session: CompanionSessions.Session, requestID: String, deviceID: String) {
        let now = clock.nowMillis()
        var answer = CompanionAnswerPush.Answer(
            text: "",
            messageID: Identifiers.newUUID(),
            fetchable: false,
            projectPath: post.projectPath,
            sessionID: session.sessionID,
            requestID: requestID,
            timestampMillis: now
        )
        let failed: Bool
        switch end {
        case .answered(let event):
            let text = event.content.trimmingCharacters(in: .whitespacesAndNewlines)
            answer.text = text.isEmpty ? "✅ Claude finished without a written answer." : text
            answer.messageID = event.id
            answer.fetchable = !text.isEmpty
            failed = false
        case .failed(let failure):
            answer.text = "⚠️ " + failure.shown
            failed = true
        }
        send(answer, failed: failed, to: deviceID, conversationID: session.conversationID)
    }

    /// Sends a turn's one push now.
    private func send(_ answer: CompanionAnswerPush.Answer, failed: Bool, to deviceID: String, conversationID: String) {
        hub.pushes.sendAnswer(
            deviceID: deviceID,
            conversationID: conversationID,
            text: answer.text,
            failed: failed,
            content: CompanionAnswerPush.content(answer)
        ) { [logger] sent in
            if !sent { logger.warning("the answer push was not delivered", metadata: ["device": "\(deviceID)", "session": "\(answer.sessionID)"]) }
        }
    }

    /// The HTTP app's turns that the last stop cut off still end with their one push (nothing
    /// else would clear the app's "thinking" state): it says to send the message again. Loop
    /// thread, at start-up.
    public func cutOff(_ records: [MessageRecord]) {
        for record in records where record.deviceID.hasPrefix(Self.httpDeviceProtocol + ":") {
            guard let conversationID = record.conversationID else { continue }
            hub.conversations.load(id: conversationID) { [self] result in
                guard case .success(let conversation?) = result else { return }
                let place = conversation.workingDirectory ?? projects.root
                let answer = CompanionAnswerPush.Answer(
                    text: "⚠️ The relay restarted while Claude was answering; send the message again.",
                    messageID: Identifiers.newUUID(),
                    fetchable: false,
                    projectPath: place == projects.root ? HTTPChatPost.workspace : place,
                    sessionID: conversation.key(in: CompanionKeys.session) ?? conversation.id,
                    requestID: record.clientID.hasPrefix(Self.httpClientPrefix)
                        ? String(record.clientID.dropFirst(Self.httpClientPrefix.count)) : record.clientID,
                    timestampMillis: clock.nowMillis()
                )
                send(answer, failed: true, to: record.deviceID, conversationID: conversationID)
            }
        }
    }

    /// Stops the session's running and queued turns; none of them gets a push. 200 whatever ran
    /// (the app then starts a fresh conversation).
    func killChat(_ body: CompanionFields, _ exchange: HTTPExchange) {
        guard let sessionID = body.string("sessionId"), !sessionID.isEmpty else {
            return exchange.respond(CompanionREST.json(400, HTTPChatRefusal("sessionId is required")))
        }
        sessions.find(sessionID) { [self] found in
            guard case .success(let session?) = found else {
                return exchange.respond(CompanionREST.json(200, HTTPChatKilled(sessionId: sessionID, processKilled: false)))
            }
            let runs = hub.turns.runs(in: session.conversationID).map(\.turn.runID)
            httpChats.killed(runs)
            let aborted = hub.turns.abort(conversationID: session.conversationID, reason: "stopped from the app")
            exchange.respond(CompanionREST.json(200, HTTPChatKilled(sessionId: sessionID, processKilled: !aborted.isEmpty)))
        }
    }

    /// An answer of this relay's user, by the id its push named.
    func storedMessage(_ id: String, _ exchange: HTTPExchange) {
        guard !id.isEmpty, id.utf8.count <= 128 else { return exchange.respond(CompanionREST.json(404, HTTPMessageNotFound())) }
        hub.history.event(id: id) { [self] result in
            guard case .success(let event?) = result, event.userID == settings.userID else {
                return exchange.respond(CompanionREST.json(404, HTTPMessageNotFound()))
            }
            let session = sessions.table.session(conversationID: event.conversationID)?.sessionID ?? event.conversationID
            let metadata = ["sessionId": session, "timestamp": CompanionTimestamp.string(event.timestampMillis)]
            exchange.respond(
                CompanionREST.json(200, HTTPStoredMessage(id: event.id, content: event.content, timestamp: event.timestampMillis, metadata: metadata))
            )
        }
    }
}

/// The HTTP app's recent posts (the 5-second duplicate rule) and the runs it stopped (no push).
struct CompanionHTTPChats {
    static let duplicateWindowMillis: Int64 = 5_000
    static let maxRemembered = 1_000
    struct Running {
        var sessionID: String
        var projectPath: String
        var startedAt: Int64
    }

    private var recent: [String: (ack: HTTPChatAccepted, at: Int64)] = [:]
    private var stopped: Set<String> = []
    /// HTTP turns running now, by run id (their heartbeats).
    var running: [String: Running] = [:]

    /// The acknowledgement of the same post within the window, marked as a duplicate.
    mutating func duplicate(of fingerprint: String, now: Int64) -> HTTPChatAccepted? {
        recent = recent.filter { now - $0.value.at <= Self.duplicateWindowMillis }
        guard let earlier = recent[fingerprint] else { return nil }
        var ack = earlier.ack
        ack.duplicate = true
        ack.message = "Duplicate message detected - not processed"
        return ack
    }

    mutating func remember(_ fingerprint: String, _ ack: HTTPChatAccepted, now: Int64) {
        if recent.count >= Self.maxRemembered, let oldest = recent.min(by: { $0.value.at < $1.value.at }) { recent.removeValue(forKey: oldest.key) }
        recent[fingerprint] = (ack, now)
    }

    mutating func killed(_ runIDs: [String]) {
        if stopped.count > Self.maxRemembered { stopped.removeAll() }
        stopped.formUnion(runIDs)
    }

    /// Whether the app stopped this run (asked once, when it ends).
    mutating func wasKilled(_ runID: String) -> Bool { stopped.remove(runID) != nil }
}
