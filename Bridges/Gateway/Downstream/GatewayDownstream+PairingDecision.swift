import GatewayWire
import RelayCore

/// An operator's decision on a pending gateway device (`device.pair.approve`, the CLI): the
/// device is stored with the role and scopes it asked for, and pairing operators hear it.
extension GatewayDownstream {
    /// What a device record keeps of the client that asked (`deviceInfoJSON`).
    private struct ClientInfo: Encodable {
        @ExplicitNull var platform: String?
        @ExplicitNull var clientId: String?
    }

    func carryOut(_ request: PairingRequests.Request, approve: Bool, completion: @escaping (String) -> Void) {
        let finish = { [self] in
            let resolved = PairingDecision(requestId: request.requestID, deviceId: request.deviceID, approved: approve, ts: clock.nowMillis())
            broadcast("device.pair.resolved", resolved)
            completion(approve ? "approved gateway device" : "denied")
        }
        guard approve else { return finish() }
        let entry = Self.pendingEntry(request)
        var granted = GatewayDeviceDecision.approved(
            request.deviceID,
            userID: settings.userID,
            publicKey: entry?.publicKey,
            role: entry?.role,
            claimedName: request.claimedName,
            deviceInfoJSON: GatewayJSON.encode(ClientInfo(platform: entry?.platform, clientId: entry?.clientId)),
            delivered: false,
            at: clock.nowMillis(),
            seen: nil
        )
        granted.scopes = entry?.scopes ?? []
        let stored = granted
        hub.devices.update(DeviceSnapshot.Request(deviceID: stored.id)) { snapshot in
            // A role or scope upgrade of the same key adds to what the device already had.
            if let existing = snapshot.device, existing.protocolName == Self.protocolName, existing.status == .approved,
                existing.publicKey == stored.publicKey
            {
                var approved = existing
                approved.roles.formUnion(stored.roles)
                approved.scopes = Array(Set(existing.scopes).union(stored.scopes)).sorted()
                snapshot.device = approved
            } else {
                // A new device, a new key, or a device paired again after it was unpaired (the
                // same device: it keeps when the relay first saw it).
                var fresh = stored
                fresh.createdAt = snapshot.device?.createdAt ?? stored.createdAt
                snapshot.tokens = [:]
                snapshot.device = fresh
            }
        } completion: { [self] result in
            if case .failure(let error) = result { logger.error("gateway approval not stored", metadata: ["error": "\(error)"]) }
            finish()
        }
    }
}
