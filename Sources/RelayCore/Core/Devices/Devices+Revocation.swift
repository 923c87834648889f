extension Devices {
    /// Revokes a device of any protocol, paired or still waiting for approval (a waiting one is
    /// stored as a revoked device, so the revocation outlasts its request): its sockets close, a
    /// client waiting on its request hears it was refused, and its later pairing requests are
    /// refused until `clawrelay devices allow`. `completion` gets what the operator reads:
    /// `revoked`, or why not.
    public func revoke(_ deviceID: String, completion: @escaping (String) -> Void) {
        let waiting = pairing.requests().filter { $0.deviceID == deviceID }
        let record = waiting.first.map { Self.revokedRecord(of: $0, at: clock.nowMillis()) }
        update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot -> Bool in
            if snapshot.device == nil { snapshot.device = record }
            guard snapshot.device != nil else { return false }
            snapshot.device?.status = .revoked
            return true
        } completion: { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(true):
                for request in waiting { pairing.decide(request.requestID, .revoke) { _ in } }
                cutOff(deviceID)
                completion("revoked")
            case .success(false):
                completion("no device and no pending request with id \(deviceID)")
            case .failure(let error):
                completion("the store failed: \(error)")
            }
        }
    }

    /// A device that was revoked while it waited: it never joined a user.
    static func revokedRecord(of request: PairingRequests.Request, at now: Int64) -> DeviceRecord {
        DeviceRecord(
            id: request.deviceID,
            userID: "",
            protocolName: request.protocolName,
            claimedName: request.claimedName,
            deviceInfoJSON: request.info.encoded(),
            isAdmin: false,
            status: .revoked,
            tokenHash: nil,
            tokenDelivered: false,
            createdAt: now,
            lastSeenAt: nil
        )
    }
}
