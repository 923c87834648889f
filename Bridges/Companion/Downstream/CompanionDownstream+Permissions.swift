import CompanionWire
import RelayCore
import RelayTransport

/// Permission prompts: the core's approvals shown as the app's alerts (`CompanionPrompts` says
/// which one a socket shows) and decided by its `permission` answer or `POST /api/permission/:sessionId`.
extension CompanionDownstream {
    /// The pending approvals of the sessions `socket` holds, oldest first.
    func pendingPrompts(for socket: CompanionSocket) -> [CompanionPrompts.Pending] {
        let held = socket.machine.held
        return hub.approvals.pending(userID: settings.userID).filter { held.contains($0.conversationID) }.map {
            CompanionPrompts.Pending(approval: $0, sessionID: sessionID(of: $0.conversationID))
        }
    }

    /// Sends the prompt `socket` is to show on `occasion`, if any.
    func showPrompt(_ occasion: CompanionPrompts.Occasion, on socket: CompanionSocket) {
        if let frame = socket.machine.prompt(occasion, pending: pendingPrompts(for: socket), now: clock.nowMillis()) { socket.send(frame) }
    }

    /// `permission`: the prompt the socket showed when the answer arrived is decided (the
    /// session's oldest pending approval when it showed none); the reply says what came of it, then
    /// the next prompt follows.
    func answerPermission(_ answer: PermissionAnswer, choice: PermissionChoice, shown: Approval?, requestID: String?, on socket: CompanionSocket) {
        let target = shown ?? oldestPending(inSession: answer.sessionId)
        guard let target else {
            return socket.send(
                CompanionSocketMachine.error(.noPendingPermission(sessionID: answer.sessionId), requestID: requestID, now: clock.nowMillis())
            )
        }
        decide(target, choice: choice, deviceID: socket.deviceID) { [self] result in
            let now = clock.nowMillis()
            switch result {
            case .success(let reply): socket.send(CompanionFrame(reply, requestID: requestID, at: now).encoded())
            case .failure(let error): socket.send(CompanionSocketMachine.error(error, requestID: requestID, now: now))
            }
            showPrompt(.answered(id: target.id), on: socket)
        }
    }

    /// `POST /api/permission/:sessionId {response, remember?}`: the session's oldest pending
    /// approval is decided by the requesting device.
    func answerPermission(sessionID: String, body: CompanionFields, deviceID: String, name: String?, _ exchange: HTTPExchange) {
        let answer: PermissionAnswer
        do { answer = try PermissionAnswer(body) } catch { return exchange.respond(Self.refusal(error)) }
        guard let choice = answer.choice else { return exchange.respond(Self.refusal(PermissionAnswer.unknownResponse(sessionID: sessionID))) }
        guard let target = oldestPending(inSession: sessionID) else {
            return exchange.respond(Self.refusal(.noPendingPermission(sessionID: sessionID)))
        }
        // A device seen only over HTTP is recorded like a socket's, so the decision names it.
        rememberDevice(deviceID, name: name)
        if hub.presence.entries[deviceID] == nil {
            hub.presence.register(deviceID: deviceID, userID: settings.userID, protocolName: "companion", delivery: settings.delivery)
        }
        decide(target, choice: choice, deviceID: deviceID) { result in
            switch result {
            case .success(let reply): exchange.respond(CompanionREST.json(200, reply))
            case .failure(let error): exchange.respond(Self.refusal(error))
            }
        }
    }

    /// The oldest pending approval in the session `sessionID` names.
    private func oldestPending(inSession sessionID: String?) -> Approval? {
        guard let sessionID, !sessionID.isEmpty else { return nil }
        return hub.approvals.pending(userID: settings.userID).first {
            $0.conversationID == sessionID || self.sessionID(of: $0.conversationID) == sessionID
        }
    }

    private func decide(
        _ approval: Approval,
        choice: PermissionChoice,
        deviceID: String,
        completion: @escaping (Result<PermissionReply, CompanionError>) -> Void
    ) {
        let decision = CompanionPrompts.decision(choice)
        let sessionID = sessionID(of: approval.conversationID)
        hub.approvals.decide(approval.id, userID: settings.userID, decision: decision, deviceID: deviceID) { [self] result in
            switch result {
            case .success(let decided):
                let what = decided.summary.isEmpty ? decided.toolName : "\(decided.toolName) \(decided.summary.prefix(CompanionPrompts.summaryLimit))"
                let reply = PermissionReply(
                    sessionId: sessionID,
                    accepted: decision != .deny,
                    decision: decision.rawValue,
                    approvalId: decided.shortID,
                    message: "\(CompanionPrompts.done(decision)): \(what) (\(decided.shortID))",
                    timestamp: CompanionTimestamp.string(clock.nowMillis())
                )
                completion(.success(reply))
            case .failure(.notOffered(let decision)):
                completion(
                    .failure(CompanionError(.invalidMessage, "this permission request cannot be answered \(decision.rawValue)", sessionID: sessionID))
                )
            case .failure(let refusal):
                // Answered first elsewhere, expired, or cancelled: nothing is waiting for this answer.
                let details: [String: JSONValue] = ["approvalId": .string(approval.shortID)]
                completion(.failure(CompanionError(.noPendingPermission, "\(refusal)", sessionID: sessionID, details: details)))
            }
        }
    }

    private static func refusal(_ error: CompanionError) -> HTTPResponse {
        CompanionREST.json(error.code.httpStatus, ErrorBody(error.message, code: error.code.rawValue))
    }
}
