import RelayCore
import RelayStore

extension GatewayDownstream: OperatorActions {
    /// Records (or keeps) a pending request, tells pairing operators, and refuses the connect.
    func requirePairing(_ request: GatewayRequest, session: GatewaySession, publicKey: String) {
        let deviceID = session.deviceID
        var entry = pending.values.first { $0.deviceID == deviceID && $0.publicKey == publicKey }
        if entry == nil {
            var created = PendingDevice(
                requestID: Identifiers.newUUID(), deviceID: deviceID, publicKey: publicKey, role: session.role, scopes: session.scopes.sorted(),
                displayName: session.displayName, platform: session.platform, clientID: session.clientID, clientMode: session.clientMode,
                remoteIP: session.connection.peerAddress, createdAt: clock.nowMillis(), timer: nil)
            let requestID = created.requestID
            created.timer = loop.schedule(afterMillis: settings.pendingTTLSeconds * 1000) { [weak self] in
                self?.pending.removeValue(forKey: requestID)
                self?.mirrorPending()
            }
            pending[requestID] = created
            entry = created
            broadcast("device.pair.requested", created.json) { $0.has("operator.pairing") }
            mirrorPending()
        }
        let details: [String: JSONValue] = [
            "code": .string("PAIRING_REQUIRED"), "requestId": .string(entry?.requestID ?? ""), "reason": .string("not-paired"),
        ]
        session.fail(request.id, GatewayError(code: .notPaired, message: "pairing required", details: details), close: 1008)
    }

    func handlePairing(_ request: GatewayRequest, on session: GatewaySession) {
        guard session.has("operator.pairing") else {
            return session.fail(request.id, .invalid("missing scope operator.pairing"), close: nil)
        }
        switch request.method {
        case "device.pair.list":
            store.perform({ db in try DeviceQueries.all(db).filter { $0.protocolName == "gateway" } }) { [self] result in
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
        case "device.pair.approve", "device.pair.reject":
            guard let requestID = request.string("requestId"), let entry = pending[requestID] else {
                return session.fail(request.id, .invalid("unknown requestId"), close: nil)
            }
            resolve(entry, approve: request.method == "device.pair.approve") { outcome in
                session.send(GatewayFrame.ok(request.id, .object(["requestId": .string(requestID), "deviceId": .string(entry.deviceID), "decision": .string(outcome)])))
            }
        case "device.token.rotate":
            guard let deviceID = request.string("deviceId") else { return session.fail(request.id, .invalid("deviceId required"), close: nil) }
            let token = Self.newDeviceToken()
            store.perform({ db -> Bool in
                guard let device = try DeviceQueries.fetch(db, id: deviceID), device.protocolName == "gateway", device.status == .approved else { return false }
                try DeviceQueries.setTokenHash(db, id: deviceID, hash: Digest.sha256Hex(token))
                return true
            }) { result in
                guard case .success(true) = result else { return session.fail(request.id, .invalid("unknown or revoked device"), close: nil) }
                session.send(GatewayFrame.ok(request.id, .object(["deviceId": .string(deviceID), "token": .string(token), "issuedAtMs": .int(self.clock.nowMillis())])))
            }
        case "device.token.revoke":
            guard let deviceID = request.string("deviceId") else { return session.fail(request.id, .invalid("deviceId required"), close: nil) }
            store.perform({ db in try DeviceQueries.setTokenHash(db, id: deviceID, hash: "revoked") }) { [self] _ in
                cutOff(deviceID: deviceID)
                session.send(GatewayFrame.ok(request.id, .object(["deviceId": .string(deviceID), "revoked": .bool(true)])))
            }
        default:
            guard let deviceID = request.string("deviceId") else { return session.fail(request.id, .invalid("deviceId required"), close: nil) }
            store.perform({ db in try DeviceQueries.setStatus(db, id: deviceID, .revoked) }) { [self] _ in
                cutOff(deviceID: deviceID)
                session.send(GatewayFrame.ok(request.id, .object(["deviceId": .string(deviceID), "removed": .bool(true)])))
            }
        }
    }

    private func resolve(_ entry: PendingDevice, approve: Bool, completion: @escaping (String) -> Void) {
        pending.removeValue(forKey: entry.requestID)
        entry.timer.map(loop.cancel)
        mirrorPending()
        let decision = approve ? "approved" : "rejected"
        let finish = { [self] in
            broadcast(
                "device.pair.resolved",
                .object(["requestId": .string(entry.requestID), "deviceId": .string(entry.deviceID), "decision": .string(decision), "ts": .int(clock.nowMillis())]))
            completion(decision)
        }
        guard approve else { return finish() }
        let record = DeviceRecord(
            id: entry.deviceID, userID: settings.userID, protocolName: "gateway", claimedName: entry.displayName,
            deviceInfoJSON: JSONValue.object(["platform": .string(entry.platform), "clientId": .string(entry.clientID)]).encoded(),
            isAdmin: false, status: .approved, tokenHash: nil, tokenDelivered: false, createdAt: clock.nowMillis(), lastSeenAt: nil)
        var granted = record
        granted.publicKey = entry.publicKey
        granted.role = entry.role
        granted.scopes = entry.scopes
        let stored = granted
        store.perform({ db in try DeviceQueries.insert(db, stored) }) { [self] result in
            if case .failure(let error) = result { logger.error("gateway approval not stored", metadata: ["error": "\(error)"]) }
            finish()
        }
    }

    public func resolvePending(deviceID: String, approve: Bool, userID: String?, completion: @escaping (String) -> Void) -> Bool {
        guard let entry = pending.values.first(where: { $0.deviceID == deviceID || $0.requestID == deviceID }) else { return false }
        resolve(entry, approve: approve) { decision in completion(decision == "approved" ? "approved gateway device" : "denied") }
        return true
    }

    public func cutOff(deviceID: String) {
        for session in sessions.values where session.deviceID == deviceID && session.isConnected {
            session.connection.close(code: 1008, reason: "device revoked")
        }
    }

    /// Copies pending requests to the database for `clawrelay devices list`.
    func mirrorPending() {
        let snapshot = pending.values.map { entry -> PendingPairing in
            var row = PendingPairing(
                deviceID: entry.deviceID, claimedName: entry.displayName, deviceInfoJSON: entry.json.encoded(), createdAt: entry.createdAt,
                expiresAt: entry.createdAt + Int64(settings.pendingTTLSeconds) * 1000)
            row.protocolName = "gateway"
            row.requestID = entry.requestID
            return row
        }
        store.perform({ db in try OperatorQueries.replacePending(db, protocolName: "gateway", snapshot) }) { _ in }
    }
}
