import Foundation
import RelayCore

/// What the device's record says about a `pair_request`.
enum PairingVerdict: Sendable, Equatable {
    case approved(token: String, userID: String)
    case needsApproval
    case rejected
    case alreadyPaired
}

extension ClawlineDownstream {
    func handlePairRequest(_ request: ClientFrame.PairRequest, on session: ClawlineSession) {
        let now = clock.nowMillis()
        // The audit attributes this socket's frames (the pair_result included) to the device asking.
        if session.connection.deviceID == nil { session.connection.deviceID = request.deviceID }
        guard pairLimiter.allow(request.deviceID, now: now) else {
            return session.fail(.rateLimited, "too many pair requests", close: true)
        }
        if deniedWhileAway.remove(request.deviceID) != nil {
            return finishPairing(session, success: false, reason: "pair_denied")
        }
        if hub.devices.pairing.request(deviceID: request.deviceID, protocolName: Self.protocolName) != nil {
            return wait(session, for: request.deviceID)
        }
        let (signer, ttl, deviceInfo) = (self.signer, Int64(settings.tokenTTLSeconds), request.deviceInfo.encoded())
        hub.devices.update(DeviceSnapshot.Request(deviceID: request.deviceID, adminExists: true)) { snapshot in
            Self.decidePairing(&snapshot, request: request, deviceInfoJSON: deviceInfo, signer: signer, ttlSeconds: ttl, now: now)
        } completion: { [self] result in
            guard session.phase != .closed else { return }
            switch result {
            case .failure(let error):
                logger.error("pairing failed in the store", metadata: ["device": "\(request.deviceID)", "error": "\(error)"])
                session.fail(.serverError, "pairing could not be stored", close: true)
            case .success(.approved(let token, let userID)):
                deliverToken(token, userID: userID, deviceID: request.deviceID, to: session)
            case .success(.rejected):
                finishPairing(session, success: false, reason: "pair_rejected")
            case .success(.alreadyPaired):
                session.fail(.invalidMessage, "device is already paired; ask the operator to revoke it first", close: true)
            case .success(.needsApproval):
                queueForApproval(request, session: session)
            }
        }
    }

    /// The re-pairing decision tree of the Clawline test list, as a pure function of the device's
    /// record (applied atomically by the core).
    static func decidePairing(
        _ snapshot: inout DeviceSnapshot,
        request: ClientFrame.PairRequest,
        deviceInfoJSON: String,
        signer: HS256Token,
        ttlSeconds: Int64,
        now: Int64
    ) -> PairingVerdict {
        func issue(userID: String, isAdmin: Bool) -> PairingVerdict {
            let token = signer.sign(
                DeviceClaims(sub: userID, deviceId: request.deviceID, isAdmin: isAdmin, iat: now / 1000, exp: now / 1000 + ttlSeconds)
            )
            snapshot.device?.tokenHash = Digest.sha256Hex(token.utf8)
            snapshot.device?.tokenDelivered = false
            return .approved(token: token, userID: userID)
        }
        if let device = snapshot.device {
            switch device.status {
            case .denied:
                return .rejected
            case .revoked:
                return .needsApproval
            case .approved:
                if !device.tokenDelivered { return issue(userID: device.userID, isAdmin: device.isAdmin) }
                if device.lastSeenAt == nil, now - device.createdAt <= 600_000 {
                    snapshot.device?.lastSeenAt = now
                    return issue(userID: device.userID, isAdmin: device.isAdmin)
                }
                return .alreadyPaired
            }
        }
        guard !snapshot.adminExists else { return .needsApproval }
        snapshot.device = DeviceRecord(
            id: request.deviceID,
            userID: Identifiers.newUUID(),
            claimedName: request.claimedName,
            deviceInfoJSON: deviceInfoJSON,
            isAdmin: true,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: false,
            createdAt: now,
            lastSeenAt: nil
        )
        return issue(userID: snapshot.device?.userID ?? "", isAdmin: true)
    }

    /// Sends `pair_result` success; `tokenDelivered` flips only once the frame is written.
    func deliverToken(_ token: String, userID: String, deviceID: String, to session: ClawlineSession) {
        session.pairingDeviceID = nil
        let frame = FrameEncoder.encode(ServerFrame.PairResult(success: true, token: token, userId: userID))
        session.connection.send(text: frame) { [hub] in
            hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID), { $0.device?.tokenDelivered = true }, completion: { _ in })
        }
    }

    func finishPairing(_ session: ClawlineSession, success: Bool, reason: String) {
        session.pairingDeviceID = nil
        session.send(ServerFrame.PairResult(success: success, reason: reason))
        session.close(code: 1000, reason: reason)
    }

    /// This socket waits for the device's pending request (a newer socket of the device takes over).
    private func wait(_ session: ClawlineSession, for deviceID: String) {
        session.pairingDeviceID = deviceID
        pairingWaiters[deviceID] = session
    }

    private func queueForApproval(_ request: ClientFrame.PairRequest, session: ClawlineSession) {
        let draft = PairingRequests.Request(
            deviceID: request.deviceID,
            protocolName: Self.protocolName,
            claimedName: request.claimedName,
            info: request.deviceInfo,
            remoteAddress: session.connection.peerAddress
        )
        switch hub.devices.pairing.admit(draft, ttlMillis: settings.pendingTTLSeconds * 1000, capacity: settings.maxPendingRequests) {
        case .full:
            session.fail(.rateLimited, "too many pending pairing requests", close: true)
        case .pending, .added:
            wait(session, for: request.deviceID)
        }
    }

    /// A request was added (admins hear it) or expired (its socket hears `pair_timeout`).
    func pairingChanged(_ event: PairingRequests.Event) {
        switch event {
        case .added(let request) where request.protocolName == Self.protocolName:
            for admin in activeSessions.values where admin.isAdmin && admin.phase == .live { sendApprovalRequest(request, to: admin) }
        case .expired(let request) where request.protocolName == Self.protocolName:
            guard let waiter = pairingWaiters.removeValue(forKey: request.deviceID), waiter.phase != .closed else { return }
            finishPairing(waiter, success: false, reason: "pair_timeout")
        default:
            break
        }
    }

    func sendApprovalRequest(_ request: PairingRequests.Request, to admin: ClawlineSession) {
        admin.send(ServerFrame.PairApprovalRequest(deviceId: request.deviceID, claimedName: request.claimedName, deviceInfo: request.info))
    }

    func handlePairDecision(deviceID: String, approve: Bool, userID: String?, on session: ClawlineSession) {
        guard session.phase == .live, session.isAdmin else {
            return session.fail(.invalidMessage, "only an authenticated admin may decide pairing", close: false)
        }
        guard let request = hub.devices.pairing.request(deviceID: deviceID, protocolName: Self.protocolName) else {
            return session.fail(.invalidMessage, "no pending request for that device (already resolved or expired)", close: false)
        }
        hub.devices.pairing.decide(request.requestID, approve: approve, userID: userID) { _ in }
    }

    /// Carries out a decision on a pending request (an admin's `pair_decision`, an operator client, the CLI).
    func carryOut(_ request: PairingRequests.Request, approve: Bool, userID: String?, completion: @escaping (String) -> Void) {
        let deviceID = request.deviceID
        let waiter = pairingWaiters.removeValue(forKey: deviceID).flatMap { $0.phase == .closed ? nil : $0 }
        guard approve else {
            if let waiter { finishPairing(waiter, success: false, reason: "pair_denied") } else { deniedWhileAway.insert(deviceID) }
            return completion("denied")
        }
        let now = clock.nowMillis()
        let owner = userID ?? Identifiers.newUUID()
        let (signer, ttl) = (self.signer, Int64(settings.tokenTTLSeconds))
        let record = DeviceRecord(
            id: deviceID,
            userID: owner,
            claimedName: request.claimedName,
            deviceInfoJSON: request.info.encoded(),
            isAdmin: false,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: false,
            createdAt: now,
            lastSeenAt: nil
        )
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot -> String in
            let token = signer.sign(DeviceClaims(sub: owner, deviceId: deviceID, isAdmin: false, iat: now / 1000, exp: now / 1000 + ttl))
            snapshot.device = record
            snapshot.device?.tokenHash = Digest.sha256Hex(token.utf8)
            return token
        } completion: { [self] result in
            switch result {
            case .success(let token):
                if let waiter, waiter.phase != .closed { deliverToken(token, userID: owner, deviceID: deviceID, to: waiter) }
                completion("approved user \(owner)")
            case .failure(let error):
                logger.error("approval failed in the store", metadata: ["device": "\(deviceID)", "error": "\(error)"])
                waiter?.fail(.serverError, "approval could not be stored", close: true)
                completion("failed: \(error)")
            }
        }
    }
}
