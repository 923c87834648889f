import GatewayWire
import RelayCore

/// What the core is asked when a connect's signature verified.
struct ConnectAttempt: Equatable, Sendable {
    var requestID: String
    var deviceID: String
    /// The raw key, base64url.
    var publicKey: String
    var role: String
    var scopes: [String]
    var credentials: ConnectCredentials
}

extension GatewaySocketMachine {
    /// The highest version both sides speak, or nil.
    func negotiate(minimum: Int64, maximum: Int64) -> Int64? {
        let version = min(maximum, max(Self.minimumProtocol, Int64(settings.maxProtocol)))
        return version >= max(minimum, Self.minimumProtocol) ? version : nil
    }

    /// Checks a `connect` in the protocol's order (versions, sizes, client, role, device, then the
    /// signature over the challenge) and, when it verifies, asks the core.
    mutating func connect(_ request: GatewayRequest<JSONValue>, now: Int64) -> [Effect] {
        let params = request.params(as: ConnectParams.self) ?? ConnectParams()
        guard let minimum = params.minProtocol, let maximum = params.maxProtocol else {
            return refusedConnect(request.id, .protocolFieldsRequired)
        }
        if let tooLarge = ConnectParams.oversizedField(in: .object(request.fields)) { return refusedConnect(request.id, .tooLarge(tooLarge)) }
        guard let version = negotiate(minimum: minimum, maximum: maximum) else {
            let supported = Self.minimumProtocol...max(Self.minimumProtocol, Int64(settings.maxProtocol))
            return refusedConnect(request.id, .protocolMismatch(clientMin: minimum, clientMax: maximum, supported: supported))
        }
        guard let client = params.client, let clientID = client.id, !clientID.isEmpty, let clientVersion = client.version,
            let platform = client.platform, let mode = client.mode, Self.clientModes.contains(mode)
        else { return refusedConnect(request.id, .clientFieldsRequired) }
        let role = params.role ?? "operator"
        guard role == "operator" || role == "node" else { return refusedConnect(request.id, .invalidRole) }
        let scopes = params.scopes ?? []
        guard let device = params.device else { return refusedConnect(request.id, .deviceIdentityRequired) }
        guard let deviceID = device.id, let publicKey = device.publicKey, let signature = device.signature, let signedAt = device.signedAt,
            let signedNonce = device.nonce
        else { return refusedConnect(request.id, .deviceFieldsRequired) }
        let fields = DeviceAuth.SignedFields(
            deviceID: deviceID,
            clientID: clientID,
            clientMode: mode,
            role: role,
            scopes: scopes,
            signedAtMillis: signedAt,
            token: params.auth?.signedToken ?? "",
            nonce: signedNonce,
            platform: platform,
            deviceFamily: client.deviceFamily ?? ""
        )
        let raw: [UInt8]
        switch DeviceAuth.verify(fields, publicKey: publicKey, signature: signature, expectedNonce: nonce, nowMillis: now) {
        case .failure(let failure): return refusedConnect(request.id, .deviceAuth(failure))
        case .success(let key): raw = key
        }
        let credentials = credentials(params.auth ?? ConnectParams.Auth())
        peer = GatewayPeer(
            deviceID: deviceID,
            publicKey: Base64URL.encode(raw),
            role: role,
            scopes: Set(scopes),
            clientID: clientID,
            clientMode: mode,
            platform: platform,
            version: clientVersion,
            displayName: client.displayName,
            deviceFamily: client.deviceFamily,
            caps: params.caps ?? [],
            commands: params.commands ?? [],
            permissions: params.permissions ?? .object([:]),
            protocolVersion: version,
            usedDeviceToken: credentials.deviceToken != nil
        )
        let attempt = ConnectAttempt(
            requestID: request.id,
            deviceID: deviceID,
            publicKey: Base64URL.encode(raw),
            role: role,
            scopes: scopes,
            credentials: credentials
        )
        // Verified: the handshake is over whatever the core decides (the nonce was used).
        return [.cancelHandshakeTimer, .authorize(attempt)]
    }

    /// What the connect's `auth` amounts to: the shared token or password, loopback
    /// auto-approval, or a device token to check.
    func credentials(_ auth: ConnectParams.Auth) -> ConnectCredentials {
        let sharedMatched = settings.sharedToken.map { expected in auth.token.map { Self.sameSecret($0, expected) } ?? false } ?? false
        let passwordMatched = settings.password.map { expected in auth.password.map { Self.sameSecret($0, expected) } ?? false } ?? false
        let loopback =
            settings.autoApproveLoopback && (peerAddress.hasPrefix("127.") || peerAddress == "::1" || peerAddress == "::ffff:127.0.0.1")
        return ConnectCredentials(
            deviceToken: auth.deviceToken ?? (sharedMatched ? nil : auth.token),
            explicitDeviceToken: auth.deviceToken != nil,
            silent: sharedMatched || passwordMatched || loopback,
            sharedTokenConfigured: settings.sharedToken != nil
        )
    }

    /// Compares digests, so the time taken says nothing about the secret.
    static func sameSecret(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(Digest.sha256Hex(a).utf8), Array(Digest.sha256Hex(b).utf8))
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
