import Crypto
import Foundation
import RelayCore

/// What the store said about a device whose signature verified.
enum ConnectVerdict: Sendable, Equatable {
    /// Paired for this role and these scopes. `token` goes back in `hello-ok.auth.deviceToken`: the
    /// one presented, or one issued now because the role had none; nil when the device connected
    /// without its token (its token is not rotated behind its back).
    case accepted(token: String?, issuedAt: Int64?)
    /// Why pairing is needed: `not-paired`, `role-upgrade`, `scope-upgrade` or `metadata-upgrade`.
    case pairingRequired(reason: String)
    /// `auth.token` was neither the shared gateway token nor this device's token.
    case tokenMismatch(canRetryWithDeviceToken: Bool)
    /// The device token presented is not the device's current token for the role.
    case deviceTokenMismatch
}

/// What a connect presented besides its signature.
struct ConnectCredentials: Sendable {
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

extension GatewayDownstream {
    /// The highest version both sides speak, or nil.
    func negotiate(minimum: Int64, maximum: Int64) -> Int64? {
        let version = min(maximum, Self.minimumProtocol > settings.maxProtocol ? Self.minimumProtocol : Int64(settings.maxProtocol))
        return version >= max(minimum, Self.minimumProtocol) ? version : nil
    }

    /// What a connect may carry: (path, largest string in bytes or largest count). A pending
    /// pairing request keeps these, so an unauthenticated client cannot make it hold much.
    static let connectFieldLimits: [(path: [String], limit: Int)] = [
        (["client", "id"], 128), (["client", "version"], 64), (["client", "platform"], 64), (["client", "mode"], 32),
        (["client", "displayName"], 256), (["client", "deviceFamily"], 64), (["client", "modelIdentifier"], 128),
        (["client", "instanceId"], 128), (["role"], 32), (["scopes"], 64), (["commands"], 512), (["caps"], 128),
        (["device", "id"], 256), (["device", "publicKey"], 256), (["device", "signature"], 512), (["device", "nonce"], 256),
    ]

    /// The first connect field past its limit (strings by bytes, arrays by count and each item by
    /// 256 bytes, `permissions` by 16 KiB encoded), or nil.
    static func oversizedConnectField(_ params: [String: JSONValue]) -> String? {
        for (path, limit) in connectFieldLimits {
            var value: JSONValue? = .object(params)
            for key in path { value = value?[key] }
            switch value {
            case .string(let text)? where text.utf8.count > limit: return path.joined(separator: ".")
            case .array(let items)? where items.count > limit || items.contains(where: { ($0.stringValue?.utf8.count ?? 0) > 256 }):
                return path.joined(separator: ".")
            default: continue
            }
        }
        if let permissions = params["permissions"], permissions.encoded().utf8.count > 16 * 1024 { return "permissions" }
        return nil
    }

    func handleConnect(_ request: GatewayRequest, on session: GatewaySession) {
        let params = request.params
        guard let minimum = params["minProtocol"]?.intValue, let maximum = params["maxProtocol"]?.intValue else {
            return session.fail(request.id, .invalid("minProtocol and maxProtocol are required integers"), close: 1008)
        }
        if let tooLong = Self.oversizedConnectField(params) {
            return session.fail(request.id, .invalid("\(tooLong) is too large"), close: 1008)
        }
        guard let version = negotiate(minimum: minimum, maximum: maximum) else {
            let details: [String: JSONValue] = [
                "code": .string("PROTOCOL_MISMATCH"), "clientMinProtocol": params["minProtocol"] ?? .null,
                "clientMaxProtocol": params["maxProtocol"] ?? .null,
                "expectedProtocol": .int(Int64(settings.maxProtocol)), "minProtocol": .int(Self.minimumProtocol),
                "maxProtocol": .int(Int64(settings.maxProtocol)),
                "minimumProbeProtocol": .int(Self.minimumProtocol),
            ]
            return session.fail(request.id, .invalid("protocol mismatch", details), close: 1002)
        }
        guard case .object(let client) = params["client"] ?? .null, let clientID = client["id"]?.stringValue, !clientID.isEmpty,
            let clientVersion = client["version"]?.stringValue, let platform = client["platform"]?.stringValue,
            let mode = client["mode"]?.stringValue, Self.clientModes.contains(mode)
        else {
            return session.fail(request.id, .invalid("client needs id, version, platform and a known mode"), close: 1008)
        }
        let role = params["role"]?.stringValue ?? "operator"
        guard role == "operator" || role == "node" else { return session.fail(request.id, .invalid("invalid role"), close: 1008) }
        let scopes = request.strings("scopes")
        guard case .object(let device) = params["device"] ?? .null else {
            return session.fail(
                request.id,
                GatewayError(code: .notPaired, message: "device identity required", details: ["code": .string("DEVICE_IDENTITY_REQUIRED")]),
                close: 1008
            )
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
            deviceID: deviceID,
            clientID: clientID,
            clientMode: mode,
            role: role,
            scopes: scopes,
            signedAtMillis: signedAt,
            token: token,
            nonce: nonce,
            platform: platform,
            deviceFamily: client["deviceFamily"]?.stringValue ?? ""
        )
        let raw: [UInt8]
        switch DeviceAuth.verify(fields, publicKey: publicKey, signature: signature, expectedNonce: session.nonce, nowMillis: clock.nowMillis()) {
        case .failure(let failure):
            return session.fail(request.id, .invalid(failure.message, ["code": .string(failure.rawValue)]), close: 1008)
        case .success(let key):
            raw = key
        }
        // The challenge nonce is single-use: a second connect on this socket cannot replay it.
        session.handshakeTimer.map(loop.cancel)
        session.protocolVersion = version
        session.role = role
        session.scopes = Set(scopes)
        session.deviceID = deviceID
        session.connection.deviceID = deviceID  // so the audit attributes a refused connect too
        session.clientID = clientID
        session.clientMode = mode
        session.platform = platform
        session.version = clientVersion
        session.displayName = client["displayName"]?.stringValue
        session.deviceFamily = client["deviceFamily"]?.stringValue
        session.caps = params["caps"]?.arrayValue ?? []
        session.commands = request.strings("commands")
        session.permissions = params["permissions"] ?? .object([:])
        let keyText = Base64URL.encode(raw)
        let (now, userID) = (clock.nowMillis(), settings.userID)
        let credentials = credentials(auth: auth, peer: session.connection.peerAddress)
        session.usedDeviceToken = credentials.deviceToken != nil
        let fresh = Self.newDeviceToken()
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot in
            Self.decide(
                &snapshot,
                publicKey: keyText,
                role: role,
                scopes: scopes,
                credentials: credentials,
                userID: userID,
                freshToken: fresh,
                now: now
            )
        } completion: { [self] result in
            guard sessions[session.connection.id] === session else { return }
            switch result {
            case .success(.accepted(let deviceToken, let issuedAt)):
                hub.devices.seen(deviceID)
                completeConnect(request, session: session, deviceToken: deviceToken, issuedAt: issuedAt)
            case .success(.tokenMismatch(let canRetry)):
                session.fail(request.id, .authRefused(.tokenMismatch(canRetryWithDeviceToken: canRetry)), close: 1008)
            case .success(.deviceTokenMismatch):
                session.fail(request.id, .authRefused(.deviceTokenMismatch), close: 1008)
            case .success(.pairingRequired(let reason)):
                requirePairing(request, session: session, publicKey: keyText, reason: reason)
            case .failure(let error):
                logger.error("gateway connect failed in the store", metadata: ["error": "\(error)"])
                session.fail(request.id, GatewayError(code: .unavailable, message: "store unavailable"), close: 1011)
            }
        }
    }

    /// Whether the device may connect for `role` with `scopes`, and with which token, as a pure
    /// function of its stored record and tokens (the core applies what it changes atomically).
    ///
    /// A presented device token must be the role's current one, checked before anything else (a
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
                var record = DeviceRecord(
                    id: deviceID,
                    userID: userID,
                    protocolName: "gateway",
                    claimedName: nil,
                    deviceInfoJSON: nil,
                    isAdmin: false,
                    status: .approved,
                    tokenHash: nil,
                    tokenDelivered: true,
                    createdAt: now,
                    lastSeenAt: now
                )
                record.publicKey = publicKey
                record.roles = [role]
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
            var record =
                sameKey
                ? device!
                : DeviceRecord(
                    id: deviceID,
                    userID: userID,
                    protocolName: "gateway",
                    claimedName: nil,
                    deviceInfoJSON: nil,
                    isAdmin: false,
                    status: .approved,
                    tokenHash: nil,
                    tokenDelivered: false,
                    createdAt: now,
                    lastSeenAt: nil
                )
            record.publicKey = publicKey
            record.roles.insert(role)
            record.scopes = Array(Set(record.scopes).union(scopes)).sorted()
            snapshot.device = record
            device = record
            paired = true
        }
        guard let device, paired else {
            return .pairingRequired(reason: sameKey ? "role-upgrade" : device == nil ? "not-paired" : "metadata-upgrade")
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

    /// What the connect's `auth` amounts to: the shared token or password, loopback
    /// auto-approval, or a device token to check.
    private func credentials(auth: [String: JSONValue], peer: String) -> ConnectCredentials {
        let presented = auth["token"]?.stringValue
        let sharedMatched = settings.sharedToken.map { expected in presented.map { Self.sameSecret($0, expected) } ?? false } ?? false
        let passwordMatched =
            settings.password.map { expected in auth["password"]?.stringValue.map { Self.sameSecret($0, expected) } ?? false } ?? false
        let loopback = settings.autoApproveLoopback && (peer.hasPrefix("127.") || peer == "::1" || peer == "::ffff:127.0.0.1")
        let explicit = auth["deviceToken"]?.stringValue
        return ConnectCredentials(
            deviceToken: explicit ?? (sharedMatched ? nil : presented),
            explicitDeviceToken: explicit != nil,
            silent: sharedMatched || passwordMatched || loopback,
            sharedTokenConfigured: settings.sharedToken != nil
        )
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

    private func completeConnect(_ request: GatewayRequest, session: GatewaySession, deviceToken: String?, issuedAt: Int64?) {
        logger.info(
            "device connected",
            metadata: [
                "protocol": "gateway", "device": "\(session.deviceID)", "role": "\(session.role)", "client": "\(session.clientID)",
                "remote": "\(session.connection.peerAddress)", "version": "\(session.protocolVersion)",
            ]
        )
        session.isConnected = true
        session.connection.maxMessageBytes = session.connection.listenerMaxMessageBytes
        session.connectedAt = clock.nowMillis()
        session.connection.userID = settings.userID
        if session.isNode {
            if let previous = nodes[session.deviceID], previous !== session { previous.connection.close(code: 1008, reason: "replaced") }
            nodes[session.deviceID] = session
            passthrough?.nodeConnected(session)
        }
        hub.attach(session, socket: session.connection.id, userID: settings.userID, protocolName: "gateway", delivery: .replay)
        session.isAttached = true
        presenceVersion += 1
        var auth: [String: JSONValue] = ["role": .string(session.role), "scopes": .array(session.scopes.sorted().map(JSONValue.string))]
        if let deviceToken {
            auth["deviceToken"] = .string(deviceToken)
            auth["issuedAtMs"] = .int(issuedAt ?? clock.nowMillis())
        }
        let hello: JSONValue = .object([
            "type": .string("hello-ok"), "protocol": .int(session.protocolVersion),
            "server": .object(["version": .string(Self.serverVersion), "connId": .string(String(session.connection.id))]),
            "features": .object(["methods": .array(Self.methods.map(JSONValue.string)), "events": .array(Self.events.map(JSONValue.string))]),
            "snapshot": .object([
                "presence": presenceList, "health": healthSnapshot, "stateVersion": stateVersion, "uptimeMs": .int(clock.nowMillis() - startedAt),
                "sessionDefaults": .object([
                    "defaultAgentId": .string("main"), "mainKey": .string("main"), "mainSessionKey": .string("main"), "scope": .string("per-sender"),
                ]),
                "authMode": .string(settings.sharedToken != nil ? "token" : settings.password != nil ? "password" : "device"),
            ]),
            "auth": .object(auth),
            "policy": .object([
                "maxPayload": .int(Int64(settings.maxPayloadBytes)), "maxBufferedBytes": .int(Int64(settings.maxBufferedBytes)),
                "tickIntervalMs": .int(Int64(settings.tickIntervalMillis)),
            ]),
        ])
        session.send(GatewayFrame.ok(request.id, hello))
        broadcast("presence", .object(["presence": presenceList]), stateVersion: stateVersion) { $0 !== session }
    }
}
