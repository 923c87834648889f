import RelayCore
import RelayStore
import RelayTransport

/// One `chat.send` being answered by a backend.
final class ChatRun {
    let runID: String
    let sessionKey: String
    var content = ""
    var seq = 0
    var lastDeltaAt: Int64 = 0
    var deltaTimer: TimerID?
    var cancellation: TurnCancellation?

    init(runID: String, sessionKey: String) {
        self.runID = runID
        self.sessionKey = sessionKey
    }
}

extension GatewayDownstream {
    static let deltaIntervalMillis: Int64 = 150

    func handleChat(_ request: GatewayRequest, on session: GatewaySession) {
        let needed = request.method == "chat.send" || request.method == "chat.abort" ? "operator.write" : "operator.read"
        guard session.has(needed) || (needed == "operator.read" && session.has("operator.write")) else {
            return session.fail(request.id, .invalid("missing scope \(needed)"), close: nil)
        }
        switch request.method {
        case "chat.send": send(request, from: session)
        case "chat.abort":
            guard let sessionKey = request.string("sessionKey") else { return session.fail(request.id, .invalid("sessionKey required"), close: nil) }
            let aborted = abort(sessionKey: sessionKey, runID: request.string("runId"))
            session.send(GatewayFrame.ok(request.id, .object(["ok": .bool(true), "aborted": .bool(!aborted.isEmpty), "runIds": .array(aborted.map(JSONValue.string))])))
        case "chat.history":
            guard let sessionKey = request.string("sessionKey") else { return session.fail(request.id, .invalid("sessionKey required"), close: nil) }
            let limit = Int(min(1000, max(1, request.params["limit"]?.intValue ?? 200)))
            let user = settings.userID
            store.perform({ db in try EventQueries.conversation(db, userID: user, conversationID: sessionKey, limit: limit) }) { result in
                let messages = ((try? result.get()) ?? []).map(Self.chatMessage)
                session.send(
                    GatewayFrame.ok(request.id, .object(["sessionKey": .string(sessionKey), "sessionId": .string(sessionKey), "messages": .array(messages)])))
            }
        default:
            let limit = Int(min(1000, max(1, request.params["limit"]?.intValue ?? 100)))
            let (user, now) = (settings.userID, clock.nowMillis())
            store.perform({ db in try EventQueries.conversations(db, userID: user, limit: limit) }) { result in
                let list = ((try? result.get()) ?? []).map { item in
                    JSONValue.object(["key": .string(item.id), "kind": .string("direct"), "updatedAt": .int(item.updatedAt), "messageCount": .int(Int64(item.count))])
                }
                session.send(GatewayFrame.ok(request.id, .object(["ts": .int(now), "count": .int(Int64(list.count)), "sessions": .array(list)])))
            }
        }
    }

    static func chatMessage(_ event: ChatEvent) -> JSONValue {
        .object([
            "role": .string(event.role.rawValue), "content": .array([.object(["type": .string("text"), "text": .string(event.content)])]),
            "timestamp": .int(event.timestampMillis),
        ])
    }

    private func send(_ request: GatewayRequest, from session: GatewaySession) {
        guard let sessionKey = request.string("sessionKey"), !sessionKey.isEmpty, let message = request.string("message") else {
            return session.fail(request.id, .invalid("sessionKey and message are required"), close: nil)
        }
        let runID = request.string("idempotencyKey") ?? Identifiers.newUUID()
        if message.trimmingCharacters(in: .whitespaces) == "/stop" {
            let aborted = abort(sessionKey: sessionKey, runID: nil)
            return session.send(GatewayFrame.ok(request.id, .object(["runId": .string(runID), "status": .string("aborted"), "runIds": .array(aborted.map(JSONValue.string))])))
        }
        if runs[runID] != nil { return session.send(GatewayFrame.ok(request.id, .object(["runId": .string(runID), "status": .string("in_flight")]))) }
        if let cached = finishedRuns[runID] { return session.send(GatewayFrame.ok(request.id, cached)) }
        guard let backend = router.backend(named: backendName(for: sessionKey)) else {
            return session.fail(request.id, GatewayError(code: .unavailable, message: "no backend for this session"), close: nil)
        }
        let run = ChatRun(runID: runID, sessionKey: sessionKey)
        runs[runID] = run
        let (user, device, now) = (settings.userID, session.deviceID, clock.nowMillis())
        store.perform({ db in
            try EventQueries.append(db, userID: user, conversationID: sessionKey, role: .user, content: message, deviceID: device, attachmentsJSON: nil, at: now)
        }) { [self] result in
            guard case .success(let event) = result else {
                runs.removeValue(forKey: runID)
                return session.fail(request.id, GatewayError(code: .unavailable, message: "the message could not be stored"), close: nil)
            }
            session.send(GatewayFrame.ok(request.id, .object(["runId": .string(runID), "status": .string("started")])))
            bus.publish(.message(event), to: user)
            let turn = TurnRequest(userID: user, deviceID: device, conversationID: sessionKey, text: message)
            let bound = LoopBound((self, run), loop: loop)
            let loop = self.loop
            run.cancellation = backend.start(turn) { event in
                loop.execute {
                    let (downstream, run) = bound.value
                    downstream.run(run, reported: event)
                }
            }
        }
    }

    /// `backend:<name>:…` session keys pick a backend by name; others use the configured one.
    func backendName(for sessionKey: String) -> String? {
        let parts = sessionKey.split(separator: ":", maxSplits: 2)
        if parts.count >= 2, parts[0] == "backend" { return String(parts[1]) }
        return settings.backend
    }

    private func run(_ run: ChatRun, reported event: TurnEvent) {
        guard runs[run.runID] === run else { return }
        switch event {
        case .typing:
            break
        case .progress(let text):
            run.content = text
            let now = clock.nowMillis()
            if now - run.lastDeltaAt >= Self.deltaIntervalMillis {
                sendDelta(run)
            } else if run.deltaTimer == nil {
                run.deltaTimer = loop.schedule(afterMillis: Int(Self.deltaIntervalMillis - (now - run.lastDeltaAt))) { [weak self, weak run] in
                    guard let self, let run, runs[run.runID] === run else { return }
                    run.deltaTimer = nil
                    sendDelta(run)
                }
            }
        case .final(let text):
            run.deltaTimer.map(loop.cancel)
            let (user, sessionKey, now) = (settings.userID, run.sessionKey, clock.nowMillis())
            store.perform({ db in
                try EventQueries.append(db, userID: user, conversationID: sessionKey, role: .assistant, content: text, deviceID: nil, attachmentsJSON: nil, at: now)
            }) { [self] result in
                guard runs.removeValue(forKey: run.runID) != nil else { return }
                switch result {
                case .success(let event):
                    bus.publish(.message(event), to: user)
                    chatEvent(run, state: "final", message: Self.chatMessage(event))
                    remember(run, status: "ok")
                case .failure:
                    chatEvent(run, state: "error", errorMessage: "the answer could not be stored")
                }
            }
        case .failed(let reason):
            runs.removeValue(forKey: run.runID)
            run.deltaTimer.map(loop.cancel)
            logger.warning("gateway chat run failed", metadata: ["run": "\(run.runID)", "reason": "\(reason)"])
            chatEvent(run, state: "error", errorMessage: "the assistant failed to answer")
            remember(run, status: "error")
        }
    }

    private func sendDelta(_ run: ChatRun) {
        run.lastDeltaAt = clock.nowMillis()
        let message: JSONValue = .object([
            "role": .string("assistant"), "content": .array([.object(["type": .string("text"), "text": .string(run.content)])]),
            "timestamp": .int(run.lastDeltaAt),
        ])
        chatEvent(run, state: "delta", message: message)
    }

    private func chatEvent(_ run: ChatRun, state: String, message: JSONValue? = nil, errorMessage: String? = nil) {
        run.seq += 1
        var payload: [String: JSONValue] = [
            "runId": .string(run.runID), "sessionKey": .string(run.sessionKey), "seq": .int(Int64(run.seq)), "state": .string(state),
        ]
        if let message { payload["message"] = message }
        if let errorMessage { payload["errorMessage"] = .string(errorMessage) }
        broadcast("chat", .object(payload)) { !$0.isNode && ($0.has("operator.read") || $0.has("operator.write")) }
    }

    private func remember(_ run: ChatRun, status: String) {
        if finishedRuns.count >= 1000 { finishedRuns.removeAll() }
        finishedRuns[run.runID] = .object(["runId": .string(run.runID), "status": .string(status)])
    }

    /// Stops the session's runs (or one of them) and reports them aborted.
    func abort(sessionKey: String, runID: String?) -> [String] {
        let targets = runs.values.filter { $0.sessionKey == sessionKey && (runID == nil || $0.runID == runID) }
        for run in targets {
            runs.removeValue(forKey: run.runID)
            run.cancellation?.cancel()
            run.deltaTimer.map(loop.cancel)
            chatEvent(run, state: "aborted")
            remember(run, status: "aborted")
        }
        return targets.map(\.runID)
    }
}
