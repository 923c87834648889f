import Crypto
import Foundation
import RelayCore
import RelayStore

/// What the store said about a device whose signature verified.
enum ConnectVerdict: Sendable {
    /// Paired with this key, role and scopes; `token` goes back in `hello-ok.auth.deviceToken`.
    case accepted(token: String)
    case pairingRequired
    case tokenMismatch
}

extension GatewayDownstream {
    func handleConnect(_ request: GatewayRequest, on session: GatewaySession) {
        let params = request.params
        guard let minimum = params["minProtocol"]?.intValue, let maximum = params["maxProtocol"]?.intValue, minimum <= Self.protocolVersion,
            Self.protocolVersion <= maximum
        else {
            return session.fail(
                request.id, .invalid("protocol mismatch", ["expectedProtocol": .int(Self.protocolVersion)]), close: 1002)
        }
        guard case .object(let client) = params["client"] ?? .null, let clientID = client["id"]?.stringValue, !clientID.isEmpty,
            let version = client["version"]?.stringValue, let platform = client["platform"]?.stringValue,
            let mode = client["mode"]?.stringValue, Self.clientModes.contains(mode)
        else {
            return session.fail(request.id, .invalid("client needs id, version, platform and a known mode"), close: 1008)
        }
        let role = params["role"]?.stringValue ?? "operator"
        guard role == "operator" || role == "node" else { return session.fail(request.id, .invalid("role must be operator or node"), close: 1008) }
        let scopes = request.strings("scopes")
        guard case .object(let device) = params["device"] ?? .null else {
            return session.fail(request.id, GatewayError(code: .notPaired, message: "device identity required"), close: 1008)
        }
        guard let deviceID = device["id"]?.stringValue, let publicKey = device["publicKey"]?.stringValue,
            let signature = device["signature"]?.stringValue, let signedAt = device["signedAt"]?.intValue,
            let nonce = device["nonce"]?.stringValue
        else {
            return session.fail(request.id, .invalid("device needs id, publicKey, signature, signedAt and nonce"), close: 1008)
        }
        let auth = params["auth"]?.objectValue ?? [:]
        let token = auth["token"]?.stringValue ?? auth["deviceToken"]?.stringValue ?? auth["bootstrapToken"]?.stringValue ?? ""
        let fields = DeviceAuth.SignedFields(
            deviceID: deviceID, clientID: clientID, clientMode: mode, role: role, scopes: scopes, signedAtMillis: signedAt, token: token,
            nonce: nonce, platform: platform, deviceFamily: client["deviceFamily"]?.stringValue ?? "")
        let raw: [UInt8]
        switch DeviceAuth.verify(fields, publicKey: publicKey, signature: signature, expectedNonce: session.nonce, nowMillis: clock.nowMillis()) {
        case .failure(let failure):
            return session.fail(request.id, .invalid("device authentication failed", ["code": .string(failure.rawValue)]), close: 1008)
        case .success(let key):
            raw = key
        }
        // The challenge nonce is single-use: a second connect on this socket cannot replay it.
        session.handshakeTimer.map(loop.cancel)
        session.role = role
        session.scopes = Set(scopes)
        session.deviceID = deviceID
        session.clientID = clientID
        session.clientMode = mode
        session.platform = platform
        session.version = version
        session.displayName = client["displayName"]?.stringValue
        session.caps = params["caps"]?.arrayValue ?? []
        session.commands = request.strings("commands")
        session.permissions = params["permissions"] ?? .object([:])
        let keyText = Base64URL.encode(raw)
        let (now, userID) = (clock.nowMillis(), settings.userID)
        let silent = silentApproval(auth: auth, peer: session.connection.peerAddress)
        store.perform({ db -> ConnectVerdict in
            try Self.decide(db, deviceID: deviceID, publicKey: keyText, role: role, scopes: scopes, presentedToken: silent ? "" : token, userID: userID, silent: silent, now: now)
        }) { [self] result in
            guard sessions[session.connection.id] === session else { return }
            switch result {
            case .success(.accepted(let deviceToken)):
                completeConnect(request, session: session, deviceToken: deviceToken)
            case .success(.tokenMismatch):
                session.fail(request.id, .invalid("device token rejected", ["code": .string("AUTH_TOKEN_MISMATCH")]), close: 1008)
            case .success(.pairingRequired):
                requirePairing(request, session: session, publicKey: keyText)
            case .failure(let error):
                logger.error("gateway connect failed in the store", metadata: ["error": "\(error)"])
                session.fail(request.id, GatewayError(code: .unavailable, message: "store unavailable"), close: 1011)
            }
        }
    }

    /// Paired devices with the same key and enough grants connect; a presented token must match.
    /// A token from `device.pair` pairs an unknown device on the spot (read/write scopes at most).
    static func decide(
        _ db: StoreTransaction, deviceID: String, publicKey: String, role: String, scopes: [String], presentedToken: String, userID: String,
        silent: Bool = false, now: Int64
    ) throws -> ConnectVerdict {
        var device = try DeviceQueries.fetch(db, id: deviceID)
        var paired =
            device.map { $0.protocolName == "gateway" && $0.status == .approved && $0.publicKey == publicKey && $0.role == role } ?? false
        if silent, !paired || !Set(scopes).isSubset(of: Set(device?.scopes ?? [])) {
            var record = DeviceRecord(
                id: deviceID, userID: userID, protocolName: "gateway", claimedName: nil, deviceInfoJSON: nil, isAdmin: false, status: .approved,
                tokenHash: nil, tokenDelivered: false, createdAt: now, lastSeenAt: nil)
            record.publicKey = publicKey
            record.role = role
            record.scopes = scopes
            try DeviceQueries.insert(db, record)
            device = record
            paired = true
        }
        if !paired, !presentedToken.isEmpty, device == nil || device?.status == .approved,
            try PairingLinkQueries.bot(db, deviceID: deviceID, tokenHash: Digest.sha256Hex(presentedToken)) != nil
        {
            var record = DeviceRecord(
                id: deviceID, userID: userID, protocolName: "gateway", claimedName: nil, deviceInfoJSON: nil, isAdmin: false, status: .approved,
                tokenHash: Digest.sha256Hex(presentedToken), tokenDelivered: true, createdAt: now, lastSeenAt: now)
            record.publicKey = publicKey
            record.role = role
            record.scopes = scopes.filter { ["operator.read", "operator.write"].contains($0) }
            try DeviceQueries.insert(db, record)
            guard Set(scopes).isSubset(of: Set(record.scopes)) else { return .pairingRequired }
            return .accepted(token: presentedToken)
        }
        guard let device, paired, Set(scopes).isSubset(of: Set(device.scopes)) else { return .pairingRequired }
        if !presentedToken.isEmpty {
            guard device.tokenHash == Digest.sha256Hex(presentedToken) else { return .tokenMismatch }
            try DeviceQueries.touch(db, id: deviceID, at: now)
            return .accepted(token: presentedToken)
        }
        let token = newDeviceToken()
        try DeviceQueries.setTokenHash(db, id: deviceID, hash: Digest.sha256Hex(token))
        try DeviceQueries.markTokenDelivered(db, id: deviceID)
        try DeviceQueries.touch(db, id: deviceID, at: now)
        return .accepted(token: token)
    }

    /// Shared token, password or loopback peer, when the configuration allows pairing without a request.
    private func silentApproval(auth: [String: JSONValue], peer: String) -> Bool {
        if let expected = settings.sharedToken, let presented = auth["token"]?.stringValue, Self.sameSecret(presented, expected) { return true }
        if let expected = settings.password, let presented = auth["password"]?.stringValue, Self.sameSecret(presented, expected) { return true }
        return settings.autoApproveLoopback && (peer.hasPrefix("127.") || peer == "::1" || peer == "::ffff:127.0.0.1")
    }

    /// Compares digests, so the time taken says nothing about the secret.
    static func sameSecret(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(SHA256.hash(data: Array(a.utf8))), Array(SHA256.hash(data: Array(b.utf8))))
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    static func newDeviceToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    private func completeConnect(_ request: GatewayRequest, session: GatewaySession, deviceToken: String) {
        session.isConnected = true
        session.connectedAt = clock.nowMillis()
        session.connection.deviceID = session.deviceID
        session.connection.userID = settings.userID
        if session.isNode {
            if let previous = nodes[session.deviceID], previous !== session { previous.connection.close(code: 1008, reason: "replaced") }
            nodes[session.deviceID] = session
            passthrough?.nodeConnected(session)
        }
        hub.attach(session, socket: session.connection.id, userID: settings.userID, protocolName: "gateway", delivery: .replay)
        session.isAttached = true
        presenceVersion += 1
        let hello: JSONValue = .object([
            "type": .string("hello-ok"), "protocol": .int(Self.protocolVersion),
            "server": .object(["version": .string("clawrelay"), "connId": .string(String(session.connection.id))]),
            "features": .object(["methods": .array(Self.methods.map(JSONValue.string)), "events": .array(Self.events.map(JSONValue.string))]),
            "snapshot": .object([
                "presence": presenceList, "health": .object(["ok": .bool(true)]), "stateVersion": stateVersion,
                "uptimeMs": .int(clock.nowMillis() - startedAt),
            ]),
            "auth": .object([
                "deviceToken": .string(deviceToken), "role": .string(session.role),
                "scopes": .array(session.scopes.sorted().map(JSONValue.string)), "issuedAtMs": .int(clock.nowMillis()),
            ]),
            "policy": .object([
                "maxPayload": .int(Int64(settings.maxPayloadBytes)), "maxBufferedBytes": .int(Int64(settings.maxBufferedBytes)),
                "tickIntervalMs": .int(Int64(settings.tickIntervalMillis)),
            ]),
        ])
        session.send(GatewayFrame.ok(request.id, hello))
        broadcast("presence", .object(["presence": presenceList]), stateVersion: stateVersion) { $0 !== session }
    }
}
