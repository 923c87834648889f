import Foundation
import RelayCore
import RelayStore

/// What the store said about an incoming chat message.
enum ChatAcceptance: Sendable {
    case accepted(MessageAcceptance)
    case invalid(FrameRejection)
    case missingAsset(String)
}

extension ClawlineDownstream {
    func lane(for deviceID: String, userID: String) -> DeviceLane {
        if let lane = lanes[deviceID] { return lane }
        let lane = DeviceLane(deviceID: deviceID, userID: userID)
        lanes[deviceID] = lane
        return lane
    }

    func handleMessage(_ message: ClientFrame.ChatMessage, on session: ClawlineSession) {
        guard let userID = session.userID else { return }
        let now = clock.nowMillis()
        guard messageLimiter.allow(session.deviceID, now: now) else {
            return session.fail(.rateLimited, "more than \(settings.messagesPerSecond) messages per second", messageID: message.clientID, close: false)
        }
        let lane = lane(for: session.deviceID, userID: userID)
        guard lane.queue.count + lane.accepting < settings.maxQueuedMessages else {
            return session.fail(.rateLimited, "too many queued messages", messageID: message.clientID, close: false)
        }
        // Validation happens after the duplicate check (a retry matching its record is accepted as is),
        // so its outcome travels into the transaction.
        let validation = MessageRules.validate(clientID: message.clientID, content: message.content, attachments: message.attachments)
        let contentHash = Digest.sha256Hex(message.content.utf8)
        let attachmentsHash = MessageRules.attachmentsHash(message.attachments)
        let deviceID = session.deviceID
        let conversation = conversationID
        lane.accepting += 1
        store.perform({ db -> ChatAcceptance in
            if let existing = try MessageQueries.fetch(db, deviceID: deviceID, clientID: message.clientID) {
                guard existing.contentHash == contentHash, existing.attachmentsHash == attachmentsHash else { return .accepted(.mismatch) }
                return .accepted(.duplicate(existing))
            }
            let validated: MessageRules.Validated
            switch validation {
            case .failure(let rejection): return .invalid(rejection)
            case .success(let value): validated = value
            }
            for assetID in validated.assetIDs {
                guard let asset = try AssetQueries.fetch(db, id: assetID), asset.userID == userID else { return .missingAsset(assetID) }
            }
            return .accepted(
                try MessageQueries.accept(
                    db, deviceID: deviceID, clientID: message.clientID, userID: userID, conversationID: conversation, content: message.content,
                    contentHash: contentHash, attachmentsHash: attachmentsHash, attachmentsJSON: validated.json, at: now))
        }) { [self] result in
            lane.accepting -= 1
            switch result {
            case .failure(let error):
                logger.error("message not stored", metadata: ["device": "\(deviceID)", "error": "\(error)"])
                if session.phase == .live || session.phase == .replaying {
                    session.fail(.serverError, "message could not be stored", messageID: message.clientID, close: false)
                }
            case .success(.invalid(let rejection)):
                reject(rejection, on: session)
            case .success(.missingAsset(let assetID)):
                session.fail(.assetNotFound, "asset \(assetID.prefix(64)) not found", messageID: message.clientID, close: false)
            case .success(.accepted(.mismatch)):
                session.fail(.invalidMessage, "message id reused with different content", messageID: message.clientID, close: false)
            case .success(.accepted(.fresh(let event))):
                stats.messagesAccepted += 1
                acknowledge(message.clientID, deviceID: deviceID, on: session)
                bus.publish(.message(event), to: userID)
                enqueue(message, on: lane)
            case .success(.accepted(.duplicate(let record))):
                switch record.state {
                case .failed:
                    session.fail(.invalidMessage, "that message failed; send it again with a new id", messageID: message.clientID, close: false)
                case .finalized:
                    acknowledge(message.clientID, deviceID: deviceID, on: session)
                case .active:
                    acknowledge(message.clientID, deviceID: deviceID, on: session)
                    if !lane.knows(message.clientID) { enqueue(message, on: lane) }
                }
            }
        }
    }

    /// Queues a turn only while the device still has a live socket: a device that went away while
    /// its message was being stored has had its queue dropped (the record stays active, so a
    /// resend with the same id after reconnecting starts the turn).
    private func enqueue(_ message: ClientFrame.ChatMessage, on lane: DeviceLane) {
        guard lanes[lane.deviceID] === lane, activeSessions[lane.deviceID] != nil else { return }
        lane.queue.append(DeviceLane.QueuedTurn(clientID: message.clientID, text: message.content))
        runNextTurn(on: lane)
    }

    private func acknowledge(_ clientID: String, deviceID: String, on session: ClawlineSession) {
        guard session.phase == .live || session.phase == .replaying else { return }
        session.connection.send(utf8: FastFrames.ack(clientID)) { [weak self] in
            self?.recordAckSent(deviceID: deviceID, clientID: clientID)
        }
    }

    /// `ackSent` flips after the ack is written; the flips gathered meanwhile go to the store as one operation.
    private func recordAckSent(deviceID: String, clientID: String) {
        acksToRecord.append((deviceID, clientID))
        guard acksToRecord.count == 1 else { return }
        loop.execute(with: self) { downstream in
            let acks = downstream.acksToRecord.map { MessageQueries.AckKey(deviceID: $0.0, clientID: $0.1) }
            downstream.acksToRecord.removeAll()
            downstream.store.perform({ db in try MessageQueries.markAckSent(db, acks) }) { _ in }
        }
    }

    func handleTyping(_ active: Bool, on session: ClawlineSession) {
        guard typingLimiter.allow(session.deviceID, now: clock.nowMillis()) else {
            return session.fail(.rateLimited, "more than \(settings.typingPerSecond) typing events per second", close: false)
        }
        let deviceID = session.deviceID
        if let timer = typingTimers.removeValue(forKey: deviceID) { loop.cancel(timer) }
        if active {
            typingTimers[deviceID] = loop.schedule(afterMillis: settings.typingTimeoutSeconds * 1000) { [weak self] in
                self?.typingTimers.removeValue(forKey: deviceID)
                self?.stats.typingDevices = self?.typingTimers.count ?? 0
            }
        }
        stats.typingDevices = typingTimers.count
    }

    /// Starts the next queued turn when the device has no stream running and its socket is live.
    func runNextTurn(on lane: DeviceLane) {
        guard lane.active == nil, !lane.queue.isEmpty, let session = activeSessions[lane.deviceID], session.phase == .live else {
            stats.queuedTurns = lanes.values.reduce(0) { $0 + $1.queue.count }
            return
        }
        let next = lane.queue.removeFirst()
        stats.queuedTurns = lanes.values.reduce(0) { $0 + $1.queue.count }
        let turn = DeviceLane.ActiveTurn(
            clientID: next.clientID, eventID: Identifiers.newEventID(), conversationID: conversationID, startedAt: clock.nowMillis())
        lane.active = turn
        guard let backend = router.backend(named: settings.backend) else {
            return turnFailed(turn, on: lane, reason: "no backend configured")
        }
        armInactivityTimer(turn, on: lane)
        let request = TurnRequest(userID: lane.userID, deviceID: lane.deviceID, conversationID: conversationID, text: next.text)
        let loop = self.loop
        let bound = LoopBound((self, lane, turn), loop: loop)
        turn.cancellation = backend.start(request) { event in
            loop.execute {
                let (downstream, lane, turn) = bound.value
                downstream.turn(turn, on: lane, reported: event)
            }
        }
    }

    private func armInactivityTimer(_ turn: DeviceLane.ActiveTurn, on lane: DeviceLane) {
        if let timer = turn.inactivityTimer { loop.cancel(timer) }
        turn.inactivityTimer = loop.schedule(afterMillis: settings.streamInactivitySeconds * 1000) { [weak self, weak lane] in
            guard let self, let lane, lane.active === turn else { return }
            turn.cancellation?.cancel()
            turnFailed(turn, on: lane, reason: "no output for \(settings.streamInactivitySeconds) s")
        }
    }

    func turn(_ turn: DeviceLane.ActiveTurn, on lane: DeviceLane, reported event: TurnEvent) {
        guard lane.active === turn else { return }
        switch event {
        case .typing(let active):
            // "Off" is sent by the lane itself once the final or the error is out, so clients
            // never see the indicator stop before the answer lands.
            if active { bus.publish(.assistantTyping(conversationID: turn.conversationID, active: true), to: lane.userID) }
        case .progress(let text):
            turn.content = text
            armInactivityTimer(turn, on: lane)
            bus.publish(.streaming(eventID: turn.eventID, conversationID: turn.conversationID, content: text, timestampMillis: turn.startedAt), to: lane.userID)
        case .final(let text):
            if let timer = turn.inactivityTimer { loop.cancel(timer) }
            let (deviceID, userID, now) = (lane.deviceID, lane.userID, clock.nowMillis())
            let (clientID, conversationID, eventID) = (turn.clientID, turn.conversationID, turn.eventID)
            store.perform({ db in
                try MessageQueries.finalize(
                    db, deviceID: deviceID, clientID: clientID, userID: userID, conversationID: conversationID, eventID: eventID,
                    content: text, at: now)
            }) { [self] result in
                guard lane.active === turn else { return }
                switch result {
                case .success(let chatEvent):
                    stats.turnsCompleted += 1
                    lane.active = nil
                    bus.publish(.message(chatEvent), to: userID)
                    bus.publish(.assistantTyping(conversationID: conversationID, active: false), to: userID)
                    runNextTurn(on: lane)
                case .failure(let error):
                    turnFailed(turn, on: lane, reason: "final not stored: \(error)")
                }
            }
        case .failed(let reason):
            turnFailed(turn, on: lane, reason: reason)
        }
    }

    /// Marks the record failed, tells the device (no final follows) and moves on to the next turn.
    func turnFailed(_ turn: DeviceLane.ActiveTurn, on lane: DeviceLane, reason: String, notify: Bool = true) {
        guard lane.active === turn else { return }
        lane.active = nil
        stats.turnsFailed += 1
        if let timer = turn.inactivityTimer { loop.cancel(timer) }
        logger.warning("turn failed", metadata: ["device": "\(lane.deviceID)", "message": "\(turn.clientID)", "reason": "\(reason)"])
        let (deviceID, clientID) = (lane.deviceID, turn.clientID)
        store.perform({ db in try MessageQueries.setState(db, deviceID: deviceID, clientID: clientID, .failed) }) { _ in }
        if notify {
            bus.publish(.assistantTyping(conversationID: turn.conversationID, active: false), to: lane.userID)
            activeSessions[lane.deviceID]?.fail(.serverError, "the assistant failed to answer", messageID: clientID, close: false)
        }
        runNextTurn(on: lane)
    }

    /// The device has no live socket any more: its stream fails and its queue is dropped.
    func deviceWentAway(_ deviceID: String, revoked: Bool = false) {
        if let timer = typingTimers.removeValue(forKey: deviceID) { loop.cancel(timer) }
        stats.typingDevices = typingTimers.count
        guard let lane = lanes[deviceID] else { return }
        lane.queue.removeAll()
        if let turn = lane.active {
            turn.cancellation?.cancel()
            turnFailed(turn, on: lane, reason: revoked ? "device revoked" : "device disconnected", notify: false)
        }
        if lane.accepting == 0 { lanes.removeValue(forKey: deviceID) }
        stats.queuedTurns = lanes.values.reduce(0) { $0 + $1.queue.count }
    }
}
