import Foundation
import RelayCore
import RelayStore

/// What the store found for an `auth` whose token verified.
enum AuthVerdict: Sendable {
    case accepted(DeviceRecord, ReplayWindow)
    /// `auth_failed` (unknown device, or a token superseded by a newer one) or `token_revoked`.
    case refused(ClawlineErrorCode)
}

extension ClawlineDownstream {
    func handleAuth(token: String, deviceID: String, cursor: String?, on session: ClawlineSession) {
        guard session.phase == .fresh else {
            return session.fail(.invalidMessage, "this socket is already authenticated", close: false)
        }
        let now = clock.nowMillis()
        guard authLimiter.allow(deviceID, now: now) else { return session.fail(.rateLimited, "too many auth attempts", close: true) }
        if pairing.entry(deviceID) != nil { return refuseAuth(session, reason: "device_not_approved") }
        guard case .success(let claims) = signer.verify(token, nowSeconds: now / 1000), claims.deviceId == deviceID,
            Identifiers.isUUIDv4(claims.deviceId)
        else { return refuseAuth(session, reason: "auth_failed") }

        // Until the store answers, this socket is on the bus and buffers live events, so nothing
        // published meanwhile is lost between the replay window and the live stream.
        session.deviceID = deviceID
        session.userID = claims.sub
        session.phase = .replaying
        hub.attach(session, socket: session.connection.id, userID: claims.sub, protocolName: "clawline", delivery: .replay)
        session.isAttached = true
        // The token says admin: hear the admin channel from now on too (the device record decides below).
        setAdmin(claims.isAdmin, on: session)
        let tokenHash = Digest.sha256Hex(token.utf8)
        let limit = settings.maxReplayMessages
        // Its completion runs before the store's below (the journal's run in order): the timeline
        // is read from there, not from the cache, which may have let it go in between.
        var timeline: Conversation?
        hub.conversations.resolve(.main, userID: claims.sub, draft: ConversationDraft(title: "Clawline")) { timeline = try? $0.get() }
        store.perform(
            { db -> AuthVerdict in
                let device: DeviceRecord
                switch try Self.authorizedDevice(db, claims: claims, tokenHash: tokenHash) {
                case .failure(let refusal): return .refused(refusal)
                case .success(let found): device = found
                }
                try DeviceQueries.touch(db, id: deviceID, at: now)
                let audiences = device.isAdmin ? [device.userID, ClawlineChannel.adminAudience] : [device.userID]
                return .accepted(device, try EventQueries.replay(db, audiences: audiences, after: cursor, limit: limit))
            },
            completion: { [self] result in
                guard session.phase == .replaying else { return }
                switch result {
                case .success(.accepted(let device, let window)):
                    guard let conversation = timeline, conversation.userID == device.userID else {
                        leave(session, userID: claims.sub)
                        session.phase = .fresh
                        return session.fail(.serverError, "could not open the timeline", close: true)
                    }
                    session.conversationID = conversation.id
                    completeAuth(session, device: device, window: window)
                case .success(.refused(let refusal)):
                    leave(session, userID: claims.sub)
                    refuseAuth(session, reason: refusal.rawValue)
                case .failure(let error):
                    leave(session, userID: claims.sub)
                    logger.error("auth failed in the store", metadata: ["device": "\(deviceID)", "error": "\(error)"])
                    session.phase = .fresh
                    session.fail(.serverError, "could not read the device", close: true)
                }
            }
        )
    }

    func refuseAuth(_ session: ClawlineSession, reason: String) {
        logger.info(
            "auth refused",
            metadata: ["protocol": "clawline", "device": "\(session.deviceID)", "reason": "\(reason)", "remote": "\(session.connection.peerAddress)"]
        )
        session.phase = .fresh
        session.userID = nil
        session.send(ServerFrame.AuthResult(success: false, reason: reason))
        session.close(code: 1008, reason: reason)
    }

    private func completeAuth(_ session: ClawlineSession, device: DeviceRecord, window: ReplayWindow) {
        if let previous = activeSessions[device.id], previous !== session, previous.phase != .closed {
            previous.fail(.sessionReplaced, "another connection authenticated as this device", close: true)
            leave(previous, userID: device.userID)
            previous.phase = .closed
        }
        activeSessions[device.id] = session
        logger.info(
            "device connected",
            metadata: [
                "protocol": "clawline", "device": "\(device.id)", "user": "\(device.userID)", "admin": "\(device.isAdmin)",
                "remote": "\(session.connection.peerAddress)", "replay": "\(window.events.count)",
            ]
        )
        session.connection.maxMessageBytes = session.connection.listenerMaxMessageBytes
        setAdmin(device.isAdmin, on: session)
        session.connection.deviceID = device.id
        session.connection.userID = device.userID
        // The newest events that fit `maxReplayBytes`: a replay is written at once, and must stay
        // well under the listener's unsent-bytes limit.
        var frames: [[UInt8]] = []
        var bytes = 0
        for event in window.events.reversed() {
            let frame = FastFrames.message(event)
            bytes += frame.count
            if bytes > Self.maxReplayBytes, !frames.isEmpty { break }
            frames.append(frame)
        }
        session.send(
            ServerFrame.AuthResult(
                success: true,
                userId: device.userID,
                sessionId: session.sessionID,
                isAdmin: device.isAdmin,
                replayCount: frames.count,
                replayTruncated: window.truncated || frames.count < window.events.count,
                historyReset: window.historyReset
            )
        )
        session.send(ServerFrame.UserInfo(userId: device.userID, isAdmin: device.isAdmin))
        for frame in frames.reversed() { session.connection.send(utf8: frame) }
        if let newest = window.events.last(where: { $0.userID == device.userID }) {
            hub.shown(deviceID: device.id, conversationID: newest.conversationID, seq: newest.seq)
        }
        session.highWater = window.highWater
        session.phase = .live
        let buffered = session.buffered
        session.buffered = []
        for event in buffered { send(event, to: session) }
        // A stream already running on a channel continues here: show what it has so far.
        let channels = [session.conversationID] + (device.isAdmin ? adminConversationID.map { [$0] } ?? [] : [])
        for conversationID in channels {
            if let active = hub.turns.activeProgress(in: conversationID), !active.content.isEmpty { send(.streaming(active), to: session) }
        }
        if device.isAdmin {
            for entry in pairing.ordered { sendApprovalRequest(entry, to: session) }
        }
    }

    /// Puts an attached socket in or out of the admins' audience (the admin channel).
    func setAdmin(_ isAdmin: Bool, on session: ClawlineSession) {
        guard session.isAdmin != isAdmin else { return }
        if isAdmin { hub.join(session, audience: ClawlineChannel.adminAudience) } else { hub.leave(session, audience: ClawlineChannel.adminAudience) }
        session.isAdmin = isAdmin
    }

    /// Revokes or denylists a device now: its sockets close with `token_revoked`, its turns stop.
    public func cutOff(deviceID: String) {
        logger.info("device cut off (revoked or denylisted); closing its sockets", metadata: ["protocol": "clawline", "device": "\(deviceID)"])
        for session in sessions.values where session.deviceID == deviceID && session.isAuthenticated {
            session.fail(.tokenRevoked, "this device was revoked", close: true)
            if let userID = session.userID { leave(session, userID: userID) }
            session.phase = .closed
        }
        activeSessions.removeValue(forKey: deviceID)
        hub.turns.abandon(deviceID: deviceID)
    }
}
