import RelayCore
import RelayStore

extension GatewayDownstream: OperatorActions {
    /// Records (or keeps) a pending request, tells pairing operators, and refuses the connect.
    func requirePairing(_ request: GatewayRequest, session: GatewaySession, publicKey: String, reason: String = "not-paired") {
        let deviceID = session.deviceID
        var entry = pending.values.first { $0.deviceID == deviceID && $0.publicKey == publicKey }
        if entry == nil {
            // Unauthenticated clients create these: capped in total and per address.
            let address = session.connection.peerAddress
            let perAddress = max(1, settings.maxPendingRequests / 10)
            if pending.count >= settings.maxPendingRequests || pending.values.filter({ $0.remoteIP == address }).count >= perAddress {
                let details: [String: JSONValue] = [
                    "code": .string("PAIRING_RATE_LIMITED"), "retryAfterMs": .int(Int64(settings.pendingTTLSeconds) * 1000),
                ]
                logger.notice("pairing request refused: too many pending", metadata: ["address": "\(address)", "pending": "\(pending.count)"])
                return session.fail(
                    request.id,
                    GatewayError(code: .unavailable, message: "too many pending pairing requests; try later", details: details),
                    close: 1008
                )
            }
            var created = PendingDevice(
                requestID: Identifiers.newUUID(),
                deviceID: deviceID,
                publicKey: publicKey,
                role: session.role,
                scopes: session.scopes.sorted(),
                displayName: session.displayName,
                platform: session.platform,
                clientID: session.clientID,
                clientMode: session.clientMode,
                remoteIP: address,
                createdAt: clock.nowMillis(),
                timer: nil
            )
            let requestID = created.requestID
            created.timer = loop.schedule(afterMillis: settings.pendingTTLSeconds * 1000) { [weak self] in
                guard let self, let expired = pending[requestID] else { return }
                removePending(expired)
            }
            addPending(created)
            entry = created
            logger.info(
                "pairing request waiting for approval",
                metadata: [
                    "protocol": "gateway", "device": "\(deviceID)", "role": "\(session.role)", "name": "\(session.displayName ?? "")",
                    "remote": "\(address)", "approve_with": "clawrelay devices approve \(deviceID)",
                ]
            )
            broadcast("device.pair.requested", created.json) { $0.has("operator.pairing") }
        }
        let details: [String: JSONValue] = [
            "code": .string("PAIRING_REQUIRED"), "requestId": .string(entry?.requestID ?? ""), "reason": .string(reason),
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

    func handlePairing(_ request: GatewayRequest, on session: GatewaySession) {
        guard session.has("operator.pairing") else {
            return session.fail(request.id, .invalid("missing scope operator.pairing"), close: nil)
        }
        switch request.method {
        case "device.pair.list":
            store.perform(
                { db in try DeviceQueries.all(db).filter { $0.protocolName == "gateway" } },
                completion: { [self] result in
                    let paired = ((try? result.get()) ?? []).map { device in
                        JSONValue.object([
                            "deviceId": .string(device.id), "publicKey": device.publicKey.map(JSONValue.string) ?? .null,
                            "role": device.role.map(JSONValue.string) ?? .null, "scopes": .array(device.scopes.map(JSONValue.string)),
                            "status": .string(device.status.rawValue), "createdAtMs": .int(device.createdAt),
                        ])
                    }
                    let waiting = pending.values.sorted { $0.createdAt < $1.createdAt }.map(\.json)
                    session.send(GatewayFrame.ok(request.id, .object(["pending": .array(waiting), "paired": .array(paired)])))
                }
            )
        case "device.pair.approve", "device.pair.reject":
            guard let requestID = request.string("requestId"), let entry = pending[requestID] else {
                return session.fail(request.id, .invalid("unknown requestId"), close: nil)
            }
            resolve(entry, approve: request.method == "device.pair.approve") { outcome in
                session.send(
                    GatewayFrame.ok(
                        request.id,
                        .object(["requestId": .string(requestID), "deviceId": .string(entry.deviceID), "decision": .string(outcome)])
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
            store.perform(
                { db -> Bool in
                    guard let device = try DeviceQueries.fetch(db, id: deviceID), device.protocolName == "gateway" else { return false }
                    try DeviceTokenQueries.deleteAll(db, deviceID: deviceID)
                    return try DeviceQueries.setStatus(db, id: deviceID, .revoked)
                },
                completion: { [self] result in
                    guard case .success(true) = result else { return session.fail(request.id, .invalid("unknown gateway deviceId"), close: nil) }
                    cutOff(deviceID: deviceID)
                    session.send(GatewayFrame.ok(request.id, .object(["deviceId": .string(deviceID), "removed": .bool(true)])))
                }
            )
        }
    }

    /// A new token for (device, role) replaces the old one; it is shown only to the device itself
    /// when it asked with its own token. The role's sockets are closed (they used the old token).
    private func rotate(_ deviceID: String, role: String, _ request: GatewayRequest, on session: GatewaySession) {
        let (token, now) = (Self.newDeviceToken(), clock.nowMillis())
        store.perform(
            { db -> [String]? in
                guard let device = try DeviceQueries.fetch(db, id: deviceID), device.protocolName == "gateway", device.status == .approved,
                    device.roles.contains(role)
                else { return nil }
                try DeviceTokenQueries.issue(db, deviceID: deviceID, role: role, tokenHash: Digest.sha256Hex(token), scopes: device.scopes, at: now)
                return device.scopes
            },
            completion: { [self] result in
                guard case .success(let scopes?) = result else { return session.fail(request.id, .invalid("device token change denied"), close: nil) }
                var payload: [String: JSONValue] = [
                    "deviceId": .string(deviceID), "role": .string(role), "scopes": .array(scopes.map(JSONValue.string)), "rotatedAtMs": .int(now),
                ]
                if session.deviceID == deviceID, session.usedDeviceToken { payload["token"] = .string(token) }
                session.send(GatewayFrame.ok(request.id, .object(payload)))
                cutOff(deviceID: deviceID, role: role)
            }
        )
    }

    private func revoke(_ deviceID: String, role: String, _ request: GatewayRequest, on session: GatewaySession) {
        let now = clock.nowMillis()
        store.perform(
            { db in try DeviceTokenQueries.revoke(db, deviceID: deviceID, role: role, at: now) },
            completion: { [self] result in
                guard case .success(true) = result else { return session.fail(request.id, .invalid("device token change denied"), close: nil) }
                session.send(GatewayFrame.ok(request.id, .object(["deviceId": .string(deviceID), "role": .string(role), "revokedAtMs": .int(now)])))
                cutOff(deviceID: deviceID, role: role)
            }
        )
    }

    private func resolve(_ entry: PendingDevice, approve: Bool, completion: @escaping (String) -> Void) {
        removePending(entry)
        logger.info(approve ? "pairing approved" : "pairing denied", metadata: ["protocol": "gateway", "device": "\(entry.deviceID)"])
        let decision = approve ? "approved" : "rejected"
        let finish = { [self] in
            broadcast(
                "device.pair.resolved",
                .object([
                    "requestId": .string(entry.requestID), "deviceId": .string(entry.deviceID), "decision": .string(decision),
                    "ts": .int(clock.nowMillis()),
                ])
            )
            completion(decision)
        }
        guard approve else { return finish() }
        let record = DeviceRecord(
            id: entry.deviceID,
            userID: settings.userID,
            protocolName: "gateway",
            claimedName: entry.displayName,
            deviceInfoJSON: JSONValue.object(["platform": .string(entry.platform), "clientId": .string(entry.clientID)]).encoded(),
            isAdmin: false,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: false,
            createdAt: clock.nowMillis(),
            lastSeenAt: nil
        )
        var granted = record
        granted.publicKey = entry.publicKey
        granted.roles = [entry.role]
        granted.scopes = entry.scopes
        let stored = granted
        store.perform(
            { db in
                // A role or scope upgrade of the same key adds to what the device already had.
                var approved = stored
                if let existing = try DeviceQueries.fetch(db, id: stored.id), existing.protocolName == "gateway", existing.status == .approved,
                    existing.publicKey == stored.publicKey
                {
                    approved = existing
                    approved.roles.formUnion(stored.roles)
                    approved.scopes = Array(Set(existing.scopes).union(stored.scopes)).sorted()
                } else {
                    try DeviceTokenQueries.deleteAll(db, deviceID: stored.id)
                }
                try DeviceQueries.insert(db, approved)
            },
            completion: { [self] result in
                if case .failure(let error) = result { logger.error("gateway approval not stored", metadata: ["error": "\(error)"]) }
                finish()
            }
        )
    }

    public func resolvePending(deviceID: String, approve: Bool, userID: String?, completion: @escaping (String) -> Void) -> Bool {
        guard let entry = pending.values.first(where: { $0.deviceID == deviceID || $0.requestID == deviceID }) else { return false }
        resolve(entry, approve: approve) { decision in completion(decision == "approved" ? "approved gateway device" : "denied") }
        return true
    }

    public func cutOff(deviceID: String) { cutOff(deviceID: deviceID, role: nil) }

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

    /// Holds a new request and mirrors it (one row) for `clawrelay devices list`.
    private func addPending(_ entry: PendingDevice) {
        pending[entry.requestID] = entry
        var row = PendingPairing(
            deviceID: entry.deviceID,
            claimedName: entry.displayName,
            deviceInfoJSON: entry.json.encoded(),
            createdAt: entry.createdAt,
            expiresAt: entry.createdAt + Int64(settings.pendingTTLSeconds) * 1000
        )
        row.protocolName = "gateway"
        row.requestID = entry.requestID
        let mirrored = row
        store.perform({ db in try OperatorQueries.upsertPending(db, mirrored) }, completion: { _ in })
    }

    private func removePending(_ entry: PendingDevice) {
        pending.removeValue(forKey: entry.requestID)
        entry.timer.map(loop.cancel)
        let deviceID = entry.deviceID
        store.perform({ db in try OperatorQueries.removePending(db, deviceID: deviceID, protocolName: "gateway") }, completion: { _ in })
    }

}
