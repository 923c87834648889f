import ClawlineWire
import RelayCore

extension ClawlineDownstream {
    /// Carries out a `message` the socket's machine let through. `receivedAt`: when the frame
    /// arrived (`MonotonicClock`), the first point of the message's stages.
    func submit(_ message: ClientFrame.Message, on socket: ClawlineSocket, receivedAt: UInt64) {
        guard let userID = socket.machine.userID else { return }
        switch message.channel {
        case .personal:
            submit(message, to: socket.machine.conversationID, owner: userID, policy: settings.turnPolicy, on: socket, receivedAt: receivedAt)
        case .admin:
            let policy = settings.adminTurnPolicy
            resolveAdminChannel { [self] result in
                guard socket.machine.isAuthenticated else { return }
                switch result {
                case .success(let conversation):
                    submit(message, to: conversation.id, owner: ClawlineChannel.adminAudience, policy: policy, on: socket, receivedAt: receivedAt)
                case .failure(let error):
                    logger.error("admin channel not available", metadata: ["error": "\(error)"])
                    perform(.fail(ClawlineError.adminChannelUnavailable.about(message.id)), on: socket)
                }
            }
        }
    }

    /// Hands a message to the core's turn runner for `conversationID`, owned by `owner` (the user,
    /// or the admins' audience); the socket's machine answers the device with the outcome.
    private func submit(
        _ message: ClientFrame.Message,
        to conversationID: String,
        owner: String,
        policy: TurnPolicy,
        on socket: ClawlineSocket,
        receivedAt: UInt64
    ) {
        guard let userID = socket.machine.userID else { return }
        let attachments = message.attachments ?? []
        // The rules are checked after the duplicate check (a retry matching its record is
        // accepted as it is), so their verdict travels with the message.
        let validation = MessageRules.validate(clientID: message.id, content: message.content, attachments: attachments)
        var submitted = UserMessage(
            conversationID: conversationID,
            userID: owner,
            senderID: userID,
            deviceID: socket.deviceID,
            clientID: message.id,
            content: message.content,
            attachmentsHash: MessageRules.attachmentsHash(attachments)
        )
        submitted.receivedAt = receivedAt
        switch validation {
        case .failure(let error): submitted.rejection = error
        case .success(let validated):
            submitted.attachmentsJSON = validated.json
            submitted.assetIDs = validated.assetIDs
        }
        let deviceID = socket.deviceID
        hub.turns.submit(submitted, policy: policy) { [self] outcome in
            switch outcome {
            case .storeFailed(let error): logger.error("message not stored", metadata: ["device": "\(deviceID)", "error": "\(error)"])
            default: break
            }
            let (key, now) = (limitKey(of: socket), clock.nowMillis())
            func limits(_ limit: ClawlineSocketMachine.RateLimit) -> Bool { limiters.allow(limit, key: key, now: now) }
            perform(socket.machine.submitted(outcome, clientID: message.id, limits: limits), on: socket)
        }
    }

    /// The user's typing (the socket's machine let it through): it clears by itself after
    /// `typing_timeout_seconds`.
    func typing(_ active: Bool, on socket: ClawlineSocket) {
        let deviceID = socket.deviceID
        if let timer = typingTimers.removeValue(forKey: deviceID) { loop.cancel(timer) }
        if active {
            typingTimers[deviceID] = loop.schedule(afterMillis: settings.typingTimeoutSeconds * 1000) { [weak self] in
                self?.typingTimers.removeValue(forKey: deviceID)
                self?.typingChanged()
            }
        }
        typingChanged()
    }

    /// The core counts the devices whose user is typing (`/metrics`).
    func typingChanged() { hub.counters.typing(typingTimers.count, protocolName: Self.protocolName) }
}
