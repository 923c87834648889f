import ClawlineWire
import RelayCore

extension ClawlineDownstream {
    /// Carries out a `pair_request` the socket's machine let through.
    func pair(_ request: ClientFrame.PairRequest, on socket: ClawlineSocket) {
        if deniedWhileAway.remove(request.deviceId) != nil { return perform(socket.machine.paired(.refused(.pairDenied)), on: socket) }
        if hub.devices.pairing.request(deviceID: request.deviceId, protocolName: Self.protocolName) != nil {
            return wait(socket, for: request.deviceId)
        }
        let (signer, ttl, now) = (self.signer, Int64(settings.tokenTTLSeconds), clock.nowMillis())
        hub.devices.update(DeviceSnapshot.Request(deviceID: request.deviceId, adminExists: true)) { snapshot in
            ClawlinePairing.decide(&snapshot, request: request, signer: signer, ttlSeconds: ttl, now: now)
        } completion: { [self] result in
            guard socket.machine.phase != .closed else { return }
            switch result {
            case .failure(let error):
                logger.error("pairing failed in the store", metadata: ["device": "\(request.deviceId)", "error": "\(error)"])
                perform(socket.machine.paired(.failed(.pairingNotStored)), on: socket)
            case .success(.approved(let token, let userID)):
                perform(socket.machine.paired(.issued(token: token, userID: userID, deviceID: request.deviceId)), on: socket)
            case .success(.rejected):
                perform(socket.machine.paired(.refused(.pairRejected)), on: socket)
            case .success(.alreadyPaired):
                perform(socket.machine.paired(.failed(.alreadyPaired)), on: socket)
            case .success(.needsApproval):
                queueForApproval(request, socket: socket)
            }
        }
    }

    /// This socket waits for the device's pending request (a newer socket of the device takes over).
    private func wait(_ socket: ClawlineSocket, for deviceID: String) {
        socket.machine.waitForDecision(on: deviceID)
        pairingWaiters[deviceID] = socket
    }

    private func queueForApproval(_ request: ClientFrame.PairRequest, socket: ClawlineSocket) {
        let draft = PairingRequests.Request(
            deviceID: request.deviceId,
            protocolName: Self.protocolName,
            claimedName: request.claimedName,
            info: request.deviceInfo,
            remoteAddress: socket.connection.peerAddress
        )
        switch hub.devices.pairing.admit(draft, ttlMillis: settings.pendingTTLSeconds * 1000, capacity: settings.maxPendingRequests) {
        case .full: perform(socket.machine.paired(.failed(.pendingQueueFull)), on: socket)
        case .pending, .added: wait(socket, for: request.deviceId)
        }
    }

    /// A request was added (live admins hear it) or expired (its socket hears `pair_timeout`).
    func pairingChanged(_ event: PairingRequests.Event) {
        switch event {
        case .added(let request) where request.protocolName == Self.protocolName:
            let frame = ServerFrame.pairApprovalRequest(ClawlineSocketMachine.approvalRequest(request))
            for admin in newest.values where admin.machine.hearsPairingRequests { perform(.send(frame), on: admin) }
        case .expired(let request) where request.protocolName == Self.protocolName:
            guard let waiter = pairingWaiters.removeValue(forKey: request.deviceID) else { return }
            perform(waiter.machine.paired(.refused(.pairTimeout)), on: waiter)
        default:
            break
        }
    }

    /// An admin's `pair_decision` the socket's machine let through (it is the core's to decide).
    func decide(_ decision: ClientFrame.PairDecision, on socket: ClawlineSocket) {
        guard let request = hub.devices.pairing.request(deviceID: decision.deviceId, protocolName: Self.protocolName) else {
            return perform(.fail(.noPendingRequest), on: socket)
        }
        hub.devices.pairing.decide(request.requestID, approve: decision.approve, userID: decision.userId) { _ in }
    }

    /// Carries out a decision on a pending request (an admin's `pair_decision`, an operator client, the CLI).
    func carryOut(_ request: PairingRequests.Request, _ decision: PairingRequests.Decision, completion: @escaping (String) -> Void) {
        let deviceID = request.deviceID
        let waiter = pairingWaiters.removeValue(forKey: deviceID).flatMap { $0.machine.phase == .closed ? nil : $0 }
        let userID: String?
        switch decision {
        case .approve(let chosen): userID = chosen
        case .deny:
            if let waiter { perform(waiter.machine.paired(.refused(.pairDenied)), on: waiter) } else { deniedWhileAway.insert(deviceID) }
            return completion("denied")
        case .revoke:
            // Revoked while it waited: its record refuses every later request too.
            if let waiter { perform(waiter.machine.paired(.refused(.pairRejected)), on: waiter) }
            return completion("revoked")
        }
        let (signer, ttl, now) = (self.signer, Int64(settings.tokenTTLSeconds), clock.nowMillis())
        let owner = userID ?? Identifiers.newUUID()
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot in
            ClawlinePairing.approve(&snapshot, request: request, userID: owner, signer: signer, ttlSeconds: ttl, now: now)
        } completion: { [self] result in
            switch result {
            case .success(let token):
                if let waiter { perform(waiter.machine.paired(.issued(token: token, userID: owner, deviceID: deviceID)), on: waiter) }
                completion("approved user \(owner)")
            case .failure(let error):
                logger.error("approval failed in the store", metadata: ["device": "\(deviceID)", "error": "\(error)"])
                if let waiter { perform(waiter.machine.paired(.failed(.approvalNotStored)), on: waiter) }
                completion("failed: \(error)")
            }
        }
    }
}
