import Foundation
import RelayCore

extension ClawlineDownstream {
    /// `receivedAt`: when the frame arrived (`MonotonicClock`), the first point of the message's stages.
    func handleMessage(_ message: ClientFrame.ChatMessage, on session: ClawlineSession, receivedAt: UInt64) {
        guard let userID = session.userID else { return }
        guard messageLimiter.allow(session.deviceID, now: clock.nowMillis()) else {
            return session.fail(
                .rateLimited,
                "more than \(settings.messagesPerSecond) messages per second",
                messageID: message.clientID,
                close: false
            )
        }
        switch message.channel {
        case .personal:
            submit(message, to: session.conversationID, owner: userID, policy: settings.turnPolicy, on: session, receivedAt: receivedAt)
        case .admin:
            guard session.isAdmin else {
                return session.fail(.invalidMessage, "only admin devices may write to the admin channel", messageID: message.clientID, close: false)
            }
            var policy = settings.turnPolicy
            policy.backend = settings.adminBackend ?? settings.backend
            resolveAdminChannel { [self] result in
                guard session.isAuthenticated else { return }
                switch result {
                case .success(let conversation):
                    submit(message, to: conversation.id, owner: ClawlineChannel.adminAudience, policy: policy, on: session, receivedAt: receivedAt)
                case .failure(let error):
                    logger.error("admin channel not available", metadata: ["error": "\(error)"])
                    session.fail(.serverError, "the admin channel could not be opened", messageID: message.clientID, close: false)
                }
            }
        }
    }

    /// Hands a message to the core's turn runner for `conversationID`, owned by `owner` (the user,
    /// or the admins' audience), and answers the device with the outcome.
    private func submit(
        _ message: ClientFrame.ChatMessage,
        to conversationID: String,
        owner: String,
        policy: TurnPolicy,
        on session: ClawlineSession,
        receivedAt: UInt64
    ) {
        guard let userID = session.userID else { return }
        // The rules are checked after the duplicate check (a retry matching its record is
        // accepted as it is), so their verdict travels with the message.
        let validation = MessageRules.validate(clientID: message.clientID, content: message.content, attachments: message.attachments)
        var submitted = UserMessage(
            conversationID: conversationID,
            userID: owner,
            senderID: userID,
            deviceID: session.deviceID,
            clientID: message.clientID,
            content: message.content,
            attachmentsHash: MessageRules.attachmentsHash(message.attachments)
        )
        submitted.receivedAt = receivedAt
        switch validation {
        case .failure(let rejection): submitted.rejection = rejection
        case .success(let validated):
            submitted.attachmentsJSON = validated.json
            submitted.assetIDs = validated.assetIDs
        }
        let deviceID = session.deviceID
        hub.turns.submit(submitted, policy: policy) { [self] outcome in
            let open = session.phase == .live || session.phase == .replaying
            switch outcome {
            case .accepted:
                stats.messagesAccepted += 1
                acknowledge(message.clientID, on: session, committedAt: MonotonicClock.nanos())
            case .duplicate(.failed, _, _), .duplicate(.aborted, _, _):
                session.fail(.invalidMessage, "that message failed; send it again with a new id", messageID: message.clientID, close: false)
            case .duplicate:
                acknowledge(message.clientID, on: session)
            case .mismatch:
                session.fail(.invalidMessage, "message id reused with different content", messageID: message.clientID, close: false)
            case .rejected(let rejection):
                if let rejection = rejection as? FrameRejection { reject(rejection, on: session) }
            case .missingAsset(let assetID):
                session.fail(.assetNotFound, "asset \(assetID.prefix(64)) not found", messageID: message.clientID, close: false)
            case .queueFull:
                session.fail(.rateLimited, "too many queued messages", messageID: message.clientID, close: false)
            case .storeFailed(let error):
                logger.error("message not stored", metadata: ["device": "\(deviceID)", "error": "\(error)"])
                if open { session.fail(.serverError, "message could not be stored", messageID: message.clientID, close: false) }
            }
        }
    }

    /// `committedAt`: when the message's commit reached the loop, for `committed_to_ack_written` (0: not counted, a retry).
    private func acknowledge(_ clientID: String, on session: ClawlineSession, committedAt: UInt64 = 0) {
        guard session.phase == .live || session.phase == .replaying else { return }
        session.connection.send(utf8: FastFrames.ack(clientID)) { [weak self] in
            self?.hub.stages.record(.committedToAckWritten, from: committedAt, to: MonotonicClock.nanos())
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
                self?.typingChanged()
            }
        }
        typingChanged()
    }

    /// The core counts the devices whose user is typing (`/metrics`).
    func typingChanged() { hub.counters.typing(typingTimers.count, protocolName: Self.protocolName) }
}
