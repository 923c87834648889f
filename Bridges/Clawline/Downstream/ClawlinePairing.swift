import ClawlineWire
import RelayCore

/// The pairing decisions of the Clawline test list, as pure functions of a device's record
/// (applied atomically by the core's `hub.devices.update`).
enum ClawlinePairing {
    /// What the device's record says about a `pair_request`.
    enum Verdict: Sendable, Equatable {
        case approved(token: String, userID: String)
        case needsApproval
        case rejected
        case alreadyPaired
    }

    /// The re-pairing decision tree: the first device ever becomes the admin at once; a token
    /// not delivered yet is issued again, and once more after a crash (never seen, within 600 s);
    /// a denylisted or revoked device is rejected (until `clawrelay devices allow`); an unpaired
    /// or unknown one waits for an admin.
    static func decide(
        _ snapshot: inout DeviceSnapshot,
        request: ClientFrame.PairRequest,
        signer: HS256Token,
        ttlSeconds: Int64,
        now: Int64
    ) -> Verdict {
        func issue(userID: String, isAdmin: Bool) -> Verdict {
            let token = signer.sign(
                DeviceClaims(sub: userID, deviceId: request.deviceId, isAdmin: isAdmin, iat: now / 1000, exp: now / 1000 + ttlSeconds)
            )
            snapshot.device?.tokenHash = Digest.sha256Hex(token.utf8)
            snapshot.device?.tokenDelivered = false
            return .approved(token: token, userID: userID)
        }
        if let device = snapshot.device {
            switch device.status {
            case .denied, .revoked:
                return .rejected
            case .unpaired:
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
            id: request.deviceId,
            userID: Identifiers.newUUID(),
            claimedName: request.claimedName,
            deviceInfoJSON: request.deviceInfo.encoded(),
            isAdmin: true,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: false,
            createdAt: now,
            lastSeenAt: nil
        )
        return issue(userID: snapshot.device?.userID ?? "", isAdmin: true)
    }

    /// An approved request becomes a device of `userID` with a new token (returned).
    static func approve(
        _ snapshot: inout DeviceSnapshot,
        request: PairingRequests.Request,
        userID: String,
        signer: HS256Token,
        ttlSeconds: Int64,
        now: Int64
    ) -> String {
        let token = signer.sign(DeviceClaims(sub: userID, deviceId: request.deviceID, isAdmin: false, iat: now / 1000, exp: now / 1000 + ttlSeconds))
        snapshot.device = DeviceRecord(
            id: request.deviceID,
            userID: userID,
            claimedName: request.claimedName,
            deviceInfoJSON: request.info.encoded(),
            isAdmin: false,
            status: .approved,
            tokenHash: Digest.sha256Hex(token.utf8),
            tokenDelivered: false,
            createdAt: now,
            lastSeenAt: nil
        )
        return token
    }
}
