import RelayCore

/// Gateway pairing: a device that may not connect yet waits in the core's book of pairing
/// requests until an operator approves it (`device.pair.approve`, the CLI); operators holding
/// `operator.pairing` manage devices and their per-role tokens.
extension GatewayDownstream {
    static let protocolName = "gateway"

    /// Records (or keeps) a pending request, tells pairing operators, and refuses the connect.
    func requirePairing(_ request: GatewayRequest, session: GatewaySession, publicKey: String, reason: String = "not-paired") {
        let deviceID = session.deviceID
        let address = session.connection.peerAddress
        let info: JSONValue = .object([
            "deviceId": .string(deviceID), "publicKey": .string(publicKey),
            "displayName": session.displayName.map(JSONValue.string) ?? .null, "platform": .string(session.platform),
            "clientId": .string(session.clientID), "clientMode": .string(session.clientMode), "role": .string(session.role),
            "scopes": .array(session.scopes.sorted().map(JSONValue.string)), "remoteIp": .string(address),
        ])
        let draft = PairingRequests.Request(
            deviceID: deviceID,
            protocolName: Self.protocolName,
            claimedName: session.displayName,
            info: info,
            remoteAddress: address
        )
        // Unauthenticated clients create these: capped in total and per address. The device's
        // request stands while it asks for the same key, role and scopes.
        let admission = hub.devices.pairing.admit(
            draft,
            ttlMillis: settings.pendingTTLSeconds * 1000,
            capacity: settings.maxPendingRequests,
            perAddress: max(1, settings.maxPendingRequests / 10),
            isSame: { $0.info == info }
        )
        let pending: PairingRequests.Request
        switch admission {
        case .full:
            let details: [String: JSONValue] = [
                "code": .string("PAIRING_RATE_LIMITED"), "retryAfterMs": .int(Int64(settings.pendingTTLSeconds) * 1000),
            ]
            logger.notice(
                "pairing request refused: too many pending",
                metadata: ["address": "\(address)", "pending": "\(hub.devices.pairing.count(protocolName: Self.protocolName))"]
            )
            return session.fail(
                request.id,
                GatewayError(code: .unavailable, message: "too many pending pairing requests; try later", details: details),
                close: 1008
            )
        case .added(let added): pending = added
        case .pending(let existing): pending = existing
        }
        let details: [String: JSONValue] = [
            "code": .string("PAIRING_REQUIRED"), "requestId": .string(pending.requestID), "reason": .string(reason),
            "deviceId": .string(deviceID),
            "requestedRole": .string(session.role), "requestedScopes": .array(session.scopes.sorted().map(JSONValue.string)),
            "remediationHint": .string("approve it with `clawrelay devices approve \(deviceID)` or device.pair.approve"),
        ]
        let message: String
        switch reason {
        case "role-upgrade": message = "pairing required: device is asking for a higher role than it was approved for"
        case "scope-upgrade": message = "pairing required: device is asking for more scopes than it was approved for"
        case "metadata-upgrade": message = "pairing required: device identity changed and must be re-approved"
        default: message = "pairing required: device is not approved yet"
        }
        session.fail(request.id, GatewayError(code: .notPaired, message: message, details: details), close: 1008)
    }

    /// A pending request as `device.pair.list` and `device.pair.requested` show it.
    static func pendingJSON(_ request: PairingRequests.Request) -> JSONValue {
        var fields = request.info.objectValue ?? [:]
        fields["requestId"] = .string(request.requestID)
        fields["ts"] = .int(request.createdAt)
        return .object(fields)
    }

    /// Pairing operators hear of new requests.
    func pairingChanged(_ event: PairingRequests.Event) {
        guard case .added(let request) = event, request.protocolName == Self.protocolName else { return }
        broadcast("device.pair.requested", Self.pendingJSON(request)) { $0.has("operator.pairing") }
    }

    func handlePairing(_ request: GatewayRequest, on session: GatewaySession) {
        guard session.has("operator.pairing") else {
            return session.fail(request.id, .invalid("missing scope operator.pairing"), close: nil)
        }
        switch request.method {
        case "device.pair.list":
            hub.devices.list(protocolName: Self.protocolName) { [self] result in
                let paired = ((try? result.get()) ?? []).map { device in
                    JSONValue.object([
                        "deviceId": .string(device.id), "publicKey": device.publicKey.map(JSONValue.string) ?? .null,
                        "role": device.role.map(JSONValue.string) ?? .null, "scopes": .array(device.scopes.map(JSONValue.string)),
                        "status": .string(device.status.rawValue), "createdAtMs": .int(device.createdAt),
                    ])
                }
                let waiting = hub.devices.pairing.requests(protocolName: Self.protocolName).map(Self.pendingJSON)
                session.send(GatewayFrame.ok(request.id, .object(["pending": .array(waiting), "paired": .array(paired)])))
            }
        case "device.pair.approve", "device.pair.reject":
            guard let requestID = request.string("requestId"), let pending = hub.devices.pairing.request(id: requestID),
                pending.protocolName == Self.protocolName
            else {
                return session.fail(request.id, .invalid("unknown requestId"), close: nil)
            }
            let approve = request.method == "device.pair.approve"
            hub.devices.pairing.decide(requestID, approve: approve, userID: nil) { _ in
                session.send(
                    GatewayFrame.ok(
                        request.id,
                        .object([
                            "requestId": .string(requestID), "deviceId": .string(pending.deviceID),
                            "decision": .string(approve ? "approved" : "rejected"),
                        ])
                    )
                )
            }
        case "device.token.rotate", "device.token.revoke":
            guard let deviceID = request.string("deviceId"), let role = request.string("role") else {
                return session.fail(request.id, .invalid("deviceId and role are required"), close: nil)
            }
            // Non-admins manage only their own device.
            guard session.has("operator.admin") || deviceID == session.deviceID else {
                return session.fail(request.id, .invalid("device token change denied"), close: nil)
            }
            request.method == "device.token.rotate"
                ? rotate(deviceID, role: role, request, on: session) : revoke(deviceID, role: role, request, on: session)
        default:
            guard let deviceID = request.string("deviceId") else { return session.fail(request.id, .invalid("deviceId required"), close: nil) }
            // Only gateway devices: other protocols' devices are the operator's (`clawrelay devices revoke`).
            hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot -> Bool in
                guard let device = snapshot.device, device.protocolName == Self.protocolName else { return false }
                snapshot.tokens = [:]
                snapshot.device?.status = .revoked
                return true
            } completion: { [self] result in
                guard case .success(true) = result else { return session.fail(request.id, .invalid("unknown gateway deviceId"), close: nil) }
                cutOff(deviceID: deviceID, role: nil)
                session.send(GatewayFrame.ok(request.id, .object(["deviceId": .string(deviceID), "removed": .bool(true)])))
            }
        }
    }

    /// A new token for (device, role) replaces the old one; it is shown only to the device itself
    /// when it asked with its own token. The role's sockets are closed (they used the old token).
    private func rotate(_ deviceID: String, role: String, _ request: GatewayRequest, on session: GatewaySession) {
        let (token, now) = (Self.newDeviceToken(), clock.nowMillis())
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot -> [String]? in
            guard let device = snapshot.device, device.protocolName == Self.protocolName, device.status == .approved, device.roles.contains(role)
            else { return nil }
            snapshot.tokens[role] = DeviceToken(
                deviceID: deviceID,
                role: role,
                tokenHash: Digest.sha256Hex(token),
                scopes: device.scopes,
                issuedAt: now
            )
            return device.scopes
        } completion: { [self] result in
            guard case .success(let scopes?) = result else { return session.fail(request.id, .invalid("device token change denied"), close: nil) }
            var payload: [String: JSONValue] = [
                "deviceId": .string(deviceID), "role": .string(role), "scopes": .array(scopes.map(JSONValue.string)), "rotatedAtMs": .int(now),
            ]
            if session.deviceID == deviceID, session.usedDeviceToken { payload["token"] = .string(token) }
            session.send(GatewayFrame.ok(request.id, .object(payload)))
            cutOff(deviceID: deviceID, role: role)
        }
    }

    private func revoke(_ deviceID: String, role: String, _ request: GatewayRequest, on session: GatewaySession) {
        let now = clock.nowMillis()
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot -> Bool in
            guard snapshot.tokens[role] != nil else { return false }
            snapshot.tokens[role]?.tokenHash = nil
            snapshot.tokens[role]?.revokedAt = now
            return true
        } completion: { [self] result in
            guard case .success(true) = result else { return session.fail(request.id, .invalid("device token change denied"), close: nil) }
            session.send(GatewayFrame.ok(request.id, .object(["deviceId": .string(deviceID), "role": .string(role), "revokedAtMs": .int(now)])))
            cutOff(deviceID: deviceID, role: role)
        }
    }

    /// Carries out a decision on a pending request (an operator's `device.pair.approve`, the CLI).
    func carryOut(_ request: PairingRequests.Request, approve: Bool, completion: @escaping (String) -> Void) {
        let decision = approve ? "approved" : "rejected"
        let finish = { [self] in
            broadcast(
                "device.pair.resolved",
                .object([
                    "requestId": .string(request.requestID), "deviceId": .string(request.deviceID), "decision": .string(decision),
                    "ts": .int(clock.nowMillis()),
                ])
            )
            completion(approve ? "approved gateway device" : "denied")
        }
        guard approve else { return finish() }
        let info = request.info
        var granted = DeviceRecord(
            id: request.deviceID,
            userID: settings.userID,
            protocolName: Self.protocolName,
            claimedName: request.claimedName,
            deviceInfoJSON: JSONValue.object(["platform": info["platform"] ?? .null, "clientId": info["clientId"] ?? .null]).encoded(),
            isAdmin: false,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: false,
            createdAt: clock.nowMillis(),
            lastSeenAt: nil
        )
        granted.publicKey = info["publicKey"]?.stringValue
        granted.roles = Set([info["role"]?.stringValue].compactMap { $0 })
        granted.scopes = info["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? []
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
                snapshot.tokens = [:]
                snapshot.device = stored
            }
        } completion: { [self] result in
            if case .failure(let error) = result { logger.error("gateway approval not stored", metadata: ["error": "\(error)"]) }
            finish()
        }
    }

    /// Closes the device's sockets (of one role, when given).
    func cutOff(deviceID: String, role: String?) {
        logger.info(
            "device cut off; closing its sockets",
            metadata: ["protocol": "gateway", "device": "\(deviceID)", "role": "\(role ?? "every role")"]
        )
        for session in sessions.values where session.deviceID == deviceID && session.isConnected && (role == nil || session.role == role) {
            session.connection.close(code: 1008, reason: "device token changed")
        }
    }
}
