import ClawlineWire
import Foundation
import RelayCore

extension ClawlineDownstream {
    /// Carries out an `auth` the socket's machine let through: the token, then the device record,
    /// the replay window and the user's timeline, each answer handed back to the machine.
    func authenticate(_ auth: ClientFrame.Auth, on socket: ClawlineSocket) {
        if hub.devices.pairing.request(deviceID: auth.deviceId, protocolName: Self.protocolName) != nil {
            return refuseAuth(.deviceNotApproved, on: socket)
        }
        guard case .success(let claims) = signer.verify(auth.token, nowSeconds: clock.nowMillis() / 1000), claims.deviceId == auth.deviceId,
            Identifiers.isUUIDv4(claims.deviceId)
        else { return refuseAuth(.authFailed, on: socket) }

        // Until the store answers, this socket is on the bus and holds live events, so nothing
        // published meanwhile is lost between the replay window and the live stream.
        perform(socket.machine.tokenVerified(deviceID: claims.deviceId, userID: claims.sub, isAdmin: claims.isAdmin), on: socket)
        let tokenHash = Digest.sha256Hex(auth.token.utf8)
        let limit = settings.maxReplayMessages
        hub.conversations.resolve(.main, userID: claims.sub, draft: ConversationDraft(title: "Clawline")) { _ in }
        hub.devices.find(claims.deviceId) { [self] result in
            guard socket.machine.phase == .authenticating else { return }
            switch result.map({ Self.authorize($0, claims: claims, tokenHash: tokenHash) }) {
            case .success(.success(let device)):
                hub.devices.seen(device.id)
                let audiences = device.isAdmin ? [device.userID, ClawlineChannel.adminAudience] : [device.userID]
                hub.history.replay(audiences: audiences, after: auth.lastMessageId, limit: limit) { [self] result in
                    guard socket.machine.phase == .authenticating else { return }
                    switch result {
                    case .success(let window):
                        // The timeline was asked for when auth began; this waits for it if it is still being made.
                        hub.conversations.resolve(.main, userID: device.userID, draft: ConversationDraft(title: "Clawline")) { [self] resolved in
                            guard socket.machine.phase == .authenticating else { return }
                            guard case .success(let conversation) = resolved else {
                                return perform(socket.machine.authBroke(.timelineNotOpened), on: socket)
                            }
                            complete(socket, device: device, conversationID: conversation.id, window: window)
                        }
                    case .failure(let error):
                        brokeInStore(socket, deviceID: claims.deviceId, error)
                    }
                }
            case .success(.failure(let refusal)):
                refuseAuth(refusal, on: socket)
            case .failure(let error):
                brokeInStore(socket, deviceID: claims.deviceId, error)
            }
        }
    }

    private func brokeInStore(_ socket: ClawlineSocket, deviceID: String, _ error: any Error) {
        logger.error("auth failed in the store", metadata: ["device": "\(deviceID)", "error": "\(error)"])
        perform(socket.machine.authBroke(.deviceNotRead), on: socket)
    }

    /// The device a verified token speaks for, or why it may not: `auth_failed` for an unknown
    /// device or a token superseded by a newer one, `token_revoked` for a revoked or denied one.
    /// The one check behind WebSocket `auth` and HTTP Bearer alike.
    static func authorize(_ device: DeviceRecord?, claims: DeviceClaims, tokenHash: String) -> Result<DeviceRecord, AuthRefusal> {
        guard let device, device.userID == claims.sub else { return .failure(.authFailed) }
        guard device.status == .approved else { return .failure(.tokenRevoked) }
        if let stored = device.tokenHash, stored != tokenHash { return .failure(.authFailed) }
        return .success(device)
    }

    private func refuseAuth(_ reason: AuthRefusal, on socket: ClawlineSocket) {
        logger.info(
            "auth refused",
            metadata: [
                "protocol": "clawline", "device": "\(socket.deviceID)", "reason": "\(reason.rawValue)", "remote": "\(socket.connection.peerAddress)",
            ]
        )
        perform(socket.machine.authRefused(reason), on: socket)
    }

    /// The device is in: a socket it authenticated before is replaced, then the machine writes the
    /// session out.
    private func complete(_ socket: ClawlineSocket, device: DeviceRecord, conversationID: String, window: ReplayWindow) {
        if let previous = newest[device.id], previous !== socket { perform(previous.machine.replaced(), on: previous) }
        newest[device.id] = socket
        logger.info(
            "device connected",
            metadata: [
                "protocol": "clawline", "device": "\(device.id)", "user": "\(device.userID)", "admin": "\(device.isAdmin)",
                "remote": "\(socket.connection.peerAddress)", "replay": "\(window.events.count)",
            ]
        )
        var grant = ClawlineSocketMachine.Grant(device: device, conversationID: conversationID, window: window)
        grant.streams = hub.turns.activeProgress(in: conversationID).map { [$0] } ?? []
        if device.isAdmin {
            grant.adminStreams = adminConversationID.flatMap { hub.turns.activeProgress(in: $0) }.map { [$0] } ?? []
            grant.pendingPairings = hub.devices.pairing.requests(protocolName: Self.protocolName)
        }
        perform(socket.machine.authenticated(grant, maxReplayBytes: Self.maxReplayBytes), on: socket)
    }
}
