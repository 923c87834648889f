import Foundation
import RelayCore
import RelayStore

/// What the store decided about a `pair_request`.
enum PairingVerdict: Sendable {
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
        if pairing.entry(request.deviceID) != nil {
            session.pairingDeviceID = request.deviceID
            _ = pairing.admit(request, waiter: session, now: now)
            return
        }
        let signer = self.signer
        let ttl = Int64(settings.tokenTTLSeconds)
        let deviceInfo = request.deviceInfo.encoded()
        store.perform(
            { db -> PairingVerdict in
                try Self.decidePairing(db, request: request, deviceInfoJSON: deviceInfo, signer: signer, ttlSeconds: ttl, now: now)
            },
            completion: { [self] result in
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
        )
    }

    /// The re-pairing decision tree of the Clawline test list, atomic in one transaction.
    static func decidePairing(
        _ db: StoreTransaction,
        request: ClientFrame.PairRequest,
        deviceInfoJSON: String,
        signer: HS256Token,
        ttlSeconds: Int64,
        now: Int64
    ) throws -> PairingVerdict {
        func issue(userID: String, isAdmin: Bool) throws -> PairingVerdict {
            let token = signer.sign(
                DeviceClaims(sub: userID, deviceId: request.deviceID, isAdmin: isAdmin, iat: now / 1000, exp: now / 1000 + ttlSeconds)
            )
            try DeviceQueries.setTokenHash(db, id: request.deviceID, hash: Digest.sha256Hex(token.utf8))
            return .approved(token: token, userID: userID)
        }
        if let device = try DeviceQueries.fetch(db, id: request.deviceID) {
            switch device.status {
            case .denied:
                return .rejected
            case .revoked:
                return .needsApproval
            case .approved:
                if !device.tokenDelivered { return try issue(userID: device.userID, isAdmin: device.isAdmin) }
                if device.lastSeenAt == nil, now - device.createdAt <= 600_000 {
                    let verdict = try issue(userID: device.userID, isAdmin: device.isAdmin)
                    try DeviceQueries.touch(db, id: device.id, at: now)
                    return verdict
                }
                return .alreadyPaired
            }
        }
        guard try !DeviceQueries.hasAdmin(db) else { return .needsApproval }
        let userID = Identifiers.newUUID()
        try DeviceQueries.insert(
            db,
            DeviceRecord(
                id: request.deviceID,
                userID: userID,
                claimedName: request.claimedName,
                deviceInfoJSON: deviceInfoJSON,
                isAdmin: true,
                status: .approved,
                tokenHash: nil,
                tokenDelivered: false,
                createdAt: now,
                lastSeenAt: nil
            )
        )
        return try issue(userID: userID, isAdmin: true)
    }

    /// Sends `pair_result` success; `tokenDelivered` flips only once the frame is written.
    func deliverToken(_ token: String, userID: String, deviceID: String, to session: ClawlineSession) {
        session.pairingDeviceID = nil
        let frame = FrameEncoder.encode(ServerFrame.PairResult(success: true, token: token, userId: userID))
        session.connection.send(text: frame) { [store] in
            store.perform({ db in try DeviceQueries.markTokenDelivered(db, id: deviceID) }) { _ in }
        }
    }

    func finishPairing(_ session: ClawlineSession, success: Bool, reason: String) {
        session.pairingDeviceID = nil
        session.send(ServerFrame.PairResult(success: success, reason: reason))
        session.close(code: 1000, reason: reason)
    }

    private func queueForApproval(_ request: ClientFrame.PairRequest, session: ClawlineSession) {
        let now = clock.nowMillis()
        switch pairing.admit(request, waiter: session, now: now) {
        case .full:
            return session.fail(.rateLimited, "too many pending pairing requests", close: true)
        case .alreadyPending:
            session.pairingDeviceID = request.deviceID
            return
        case .added:
            session.pairingDeviceID = request.deviceID
            let timer = loop.schedule(afterMillis: settings.pendingTTLSeconds * 1000) { [weak self] in
                self?.expirePending(request.deviceID)
            }
            pairing.setTimer(timer, for: request.deviceID)
            if let entry = pairing.entry(request.deviceID) {
                for admin in activeSessions.values where admin.isAdmin && admin.phase == .live { sendApprovalRequest(entry, to: admin) }
                mirrorAdded(entry)
                logger.info(
                    "pairing request waiting for approval",
                    metadata: [
                        "protocol": "clawline", "device": "\(entry.deviceID)", "name": "\(entry.claimedName ?? "")",
                        "remote": "\(session.connection.peerAddress)", "approve_with": "clawrelay devices approve \(entry.deviceID)",
                    ]
                )
            }
        }
    }

    func sendApprovalRequest(_ entry: PairingBook.Entry, to admin: ClawlineSession) {
        admin.send(ServerFrame.PairApprovalRequest(deviceId: entry.deviceID, claimedName: entry.claimedName, deviceInfo: entry.deviceInfo))
    }

    private func expirePending(_ deviceID: String) {
        guard let entry = pairing.remove(deviceID) else { return }
        if let waiter = entry.waiter, waiter.phase != .closed { finishPairing(waiter, success: false, reason: "pair_timeout") }
        mirrorRemoved(deviceID)
    }

    func handlePairDecision(deviceID: String, approve: Bool, userID: String?, on session: ClawlineSession) {
        guard session.phase == .live, session.isAdmin else {
            return session.fail(.invalidMessage, "only an authenticated admin may decide pairing", close: false)
        }
        guard pairing.entry(deviceID) != nil else {
            return session.fail(.invalidMessage, "no pending request for that device (already resolved or expired)", close: false)
        }
        decide(deviceID: deviceID, approve: approve, userID: userID) { _ in }
    }

    /// Resolves a pending request (from an admin's `pair_decision` or the operator CLI).
    func decide(deviceID: String, approve: Bool, userID: String?, completion: @escaping (String) -> Void) {
        guard let entry = pairing.remove(deviceID) else { return completion("no pending request for \(deviceID)") }
        if let timer = entry.timer { loop.cancel(timer) }
        mirrorRemoved(deviceID)
        logger.info(approve ? "pairing approved" : "pairing denied", metadata: ["protocol": "clawline", "device": "\(deviceID)"])
        guard approve else {
            if let waiter = entry.waiter, waiter.phase != .closed {
                finishPairing(waiter, success: false, reason: "pair_denied")
            } else {
                deniedWhileAway.insert(deviceID)
            }
            return completion("denied")
        }
        let now = clock.nowMillis()
        let owner = userID ?? Identifiers.newUUID()
        let signer = self.signer
        let ttl = Int64(settings.tokenTTLSeconds)
        let record = DeviceRecord(
            id: deviceID,
            userID: owner,
            claimedName: entry.claimedName,
            deviceInfoJSON: entry.deviceInfo.encoded(),
            isAdmin: false,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: false,
            createdAt: now,
            lastSeenAt: nil
        )
        store.perform(
            { db -> String in
                try DeviceQueries.insert(db, record)
                let token = signer.sign(DeviceClaims(sub: owner, deviceId: deviceID, isAdmin: false, iat: now / 1000, exp: now / 1000 + ttl))
                try DeviceQueries.setTokenHash(db, id: deviceID, hash: Digest.sha256Hex(token.utf8))
                return token
            },
            completion: { [self] result in
                switch result {
                case .success(let token):
                    if let waiter = entry.waiter, waiter.phase != .closed { deliverToken(token, userID: owner, deviceID: deviceID, to: waiter) }
                    completion("approved user \(owner)")
                case .failure(let error):
                    logger.error("approval failed in the store", metadata: ["device": "\(deviceID)", "error": "\(error)"])
                    if let waiter = entry.waiter { waiter.fail(.serverError, "approval could not be stored", close: true) }
                    completion("failed: \(error)")
                }
            }
        )
    }

    /// Copies a new pending request to the database (one row) so `clawrelay devices list` shows it.
    private func mirrorAdded(_ entry: PairingBook.Entry) {
        stats.pendingPairings = pairing.count
        let row = PendingPairing(
            deviceID: entry.deviceID,
            claimedName: entry.claimedName,
            deviceInfoJSON: entry.deviceInfo.encoded(),
            createdAt: entry.createdAt,
            expiresAt: entry.expiresAt
        )
        store.perform({ db in try OperatorQueries.upsertPending(db, row) }, completion: { _ in })
    }

    private func mirrorRemoved(_ deviceID: String) {
        stats.pendingPairings = pairing.count
        store.perform({ db in try OperatorQueries.removePending(db, deviceID: deviceID, protocolName: "clawline") }, completion: { _ in })
    }
}
