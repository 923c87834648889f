import RelayCore

/// What the store said about a device whose signature verified.
enum ConnectVerdict: Sendable, Equatable {
    /// Paired for this role and these scopes. `token` goes back in `hello-ok.auth.deviceToken`: the
    /// one presented, or one issued now because the role had none; nil when the device connected
    /// without its token (its token is not rotated behind its back).
    case accepted(token: String?, issuedAt: Int64?)
    /// Why pairing is needed: `not-paired`, `role-upgrade`, `scope-upgrade` or `metadata-upgrade`.
    case pairingRequired(reason: String)
    /// Revoked (or denylisted, `revoked` false): refused until the operator allows it again.
    case refused(revoked: Bool)
    /// `auth.token` was neither the shared gateway token nor this device's token.
    case tokenMismatch(canRetryWithDeviceToken: Bool)
    /// The device token presented is not the device's current token for the role.
    case deviceTokenMismatch
}

/// What a connect presented besides its signature.
struct ConnectCredentials: Equatable, Sendable {
    /// A device token to check: `auth.deviceToken`, or `auth.token` when it is not the shared secret.
    var deviceToken: String?
    /// `auth.deviceToken` itself was sent.
    var explicitDeviceToken: Bool
    /// The shared token or password matched, or loopback auto-approval applies: an unknown device
    /// (or a new role or scope) is approved on the spot.
    var silent: Bool
    /// A shared gateway token is configured, so a wrong `auth.token` is a gateway-token mismatch.
    var sharedTokenConfigured: Bool
}

/// Whether a verified device may connect, as a pure function of what the core holds about it.
enum GatewayDeviceDecision {
    /// Whether the device may connect for `role` with `scopes`, and with which token, as a pure
    /// function of its stored record and tokens (the core applies what it changes atomically).
    ///
    /// A revoked or denylisted device is refused before anything else, whatever it presents. A
    /// presented device token must be the role's current one, checked next (a
    /// wrong token is refused even where unknown devices are approved silently). A token from
    /// `device.pair` pairs an unknown device on the spot (read/write scopes at most). A paired
    /// device connecting without its token gets `freshToken` only if the role never had one.
    static func decide(
        _ snapshot: inout DeviceSnapshot,
        publicKey: String,
        role: String,
        scopes: [String],
        credentials: ConnectCredentials,
        userID: String,
        freshToken: String,
        now: Int64
    ) -> ConnectVerdict {
        let deviceID = snapshot.deviceID
        var device = snapshot.device
        if let status = device?.status, status.refusesPairing { return .refused(revoked: status == .revoked) }
        let sameKey = device.map { $0.protocolName == "gateway" && $0.status == .approved && $0.publicKey == publicKey } ?? false
        var paired = sameKey && device?.roles.contains(role) == true
        let stored = snapshot.tokens[role]
        if let presented = credentials.deviceToken {
            let hash = Digest.sha256Hex(presented)
            if paired, stored?.tokenHash == hash {
                guard Set(scopes).isSubset(of: Set(device?.scopes ?? [])) else { return .pairingRequired(reason: "scope-upgrade") }
                return .accepted(token: presented, issuedAt: stored?.issuedAt)
            }
            if !paired, device == nil || device?.status == .approved, snapshot.bots.values.contains(hash) {
                var record = approved(deviceID, userID: userID, publicKey: publicKey, role: role, delivered: true, at: now, seen: now)
                record.scopes = scopes.filter { ["operator.read", "operator.write"].contains($0) }
                snapshot.device = record
                snapshot.tokens[role] = DeviceToken(deviceID: deviceID, role: role, tokenHash: hash, scopes: record.scopes, issuedAt: now)
                guard Set(scopes).isSubset(of: Set(record.scopes)) else { return .pairingRequired(reason: "scope-upgrade") }
                return .accepted(token: presented, issuedAt: now)
            }
            if credentials.sharedTokenConfigured, !credentials.explicitDeviceToken { return .tokenMismatch(canRetryWithDeviceToken: true) }
            return .deviceTokenMismatch
        }
        if credentials.silent, !paired || !Set(scopes).isSubset(of: Set(device?.scopes ?? [])) {
            var record = sameKey ? device! : approved(deviceID, userID: userID, publicKey: publicKey, role: nil, delivered: false, at: now, seen: nil)
            record.publicKey = publicKey
            record.roles.insert(role)
            record.scopes = Array(Set(record.scopes).union(scopes)).sorted()
            snapshot.device = record
            device = record
            paired = true
        }
        guard let device, paired else {
            // Only an approved device's other key is an identity change; an unpaired one starts over.
            return .pairingRequired(reason: sameKey ? "role-upgrade" : device?.status == .approved ? "metadata-upgrade" : "not-paired")
        }
        guard Set(scopes).isSubset(of: Set(device.scopes)) else { return .pairingRequired(reason: "scope-upgrade") }
        guard stored == nil else { return .accepted(token: nil, issuedAt: nil) }
        snapshot.tokens[role] = DeviceToken(
            deviceID: deviceID,
            role: role,
            tokenHash: Digest.sha256Hex(freshToken),
            scopes: device.scopes,
            issuedAt: now
        )
        return .accepted(token: freshToken, issuedAt: now)
    }

    /// A gateway device approved at `now` with its key (and role, when given).
    static func approved(
        _ deviceID: String,
        userID: String,
        publicKey: String?,
        role: String?,
        claimedName: String? = nil,
        deviceInfoJSON: String? = nil,
        delivered: Bool,
        at now: Int64,
        seen: Int64?
    ) -> DeviceRecord {
        var record = DeviceRecord(
            id: deviceID,
            userID: userID,
            protocolName: GatewayDownstream.protocolName,
            claimedName: claimedName,
            deviceInfoJSON: deviceInfoJSON,
            isAdmin: false,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: delivered,
            createdAt: now,
            lastSeenAt: seen
        )
        record.publicKey = publicKey
        record.roles = Set([role].compactMap { $0 })
        return record
    }

    static func newDeviceToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
