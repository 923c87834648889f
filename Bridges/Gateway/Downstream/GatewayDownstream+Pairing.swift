import GatewayWire
import RelayCore

/// Gateway pairing: a device that may not connect yet waits in the core's book of pairing
/// requests until an operator approves it (`device.pair.approve`, the CLI); operators holding
/// `operator.pairing` manage devices and their per-role tokens.
extension GatewayDownstream {
    /// Records (or keeps) a pending request, tells pairing operators, and refuses the connect.
    func requirePairing(_ requestID: String, on socket: GatewaySocket, reason: String) {
        guard let peer = socket.peer else { return }
        let address = socket.connection.peerAddress
        let info = GatewayJSON.value(peer.pairingEntry(remoteIP: address))
        let draft = PairingRequests.Request(
            deviceID: peer.deviceID,
            protocolName: Self.protocolName,
            claimedName: peer.displayName,
            info: info,
            remoteAddress: address,
            reason: reason
        )
        // Unauthenticated clients create these: capped in total and per address. The device's
        // request stands while it asks for the same key, role and scopes.
        let admission = hub.devices.pairing.admit(
            draft,
            ttlMillis: settings.pendingTTLSeconds * 1000,
            capacity: settings.maxPendingRequests,
            perAddress: max(1, settings.maxPendingRequests / 10),
            isSame: { $0.info == info && $0.reason == reason }
        )
        let pending: PairingRequests.Request
        switch admission {
        case .full:
            logger.notice(
                "pairing request refused: too many pending",
                metadata: ["address": "\(address)", "pending": "\(hub.devices.pairing.count(protocolName: Self.protocolName))"]
            )
            let refusal = GatewayError.pairingRateLimited(retryAfterMillis: Int64(settings.pendingTTLSeconds) * 1000)
            return perform(socket.machine.refusedConnect(requestID, refusal), on: socket)
        case .added(let added):
            pending = added
            waitsLogged.removeValue(forKey: peer.deviceID)  // a new request (or one replacing another): a new window
        case .pending(let existing): pending = existing
        }
        let refusal = GatewayError.pairingRequired(
            requestID: pending.requestID,
            reason: reason,
            deviceID: peer.deviceID,
            role: peer.role,
            scopes: peer.sortedScopes
        )
        let effects = socket.machine.refusedConnect(requestID, refusal)
        perform(announcesWait(of: peer.deviceID) ? effects : effects.map(Self.quieted), on: socket)
    }

    /// A client waiting for approval asks again every few seconds: its refused connect is logged
    /// at info once per approval window (until the request is decided or expires, or every
    /// `waitLogMillis`), at debug the other times.
    func announcesWait(of deviceID: String) -> Bool {
        let now = clock.nowMillis()
        if let last = waitsLogged[deviceID], now - last < Self.waitLogMillis { return false }
        waitsLogged[deviceID] = now
        return true
    }

    static let waitLogMillis: Int64 = 600_000

    /// The effect logged at debug instead of info.
    static func quieted(_ effect: GatewaySocketMachine.Effect) -> GatewaySocketMachine.Effect {
        guard case .logRefusal(let error, _) = effect else { return effect }
        return .logRefusal(error, closing: nil)
    }

    /// A pending request as `device.pair.list` and `device.pair.requested` show it.
    static func pendingEntry(_ request: PairingRequests.Request) -> PairingRequestEntry? {
        guard var entry = GatewayJSON.decode(PairingRequestEntry.self, from: request.info) else { return nil }
        entry.requestId = request.requestID
        entry.ts = request.createdAt
        return entry
    }

    /// Pairing operators hear of new requests; a decided or expired one ends its approval window.
    func pairingChanged(_ event: PairingRequests.Event) {
        switch event {
        case .added(let request) where request.protocolName == Self.protocolName:
            guard let entry = Self.pendingEntry(request) else { return }
            broadcast("device.pair.requested", entry) { $0.has("operator.pairing") }
        case .decided(let request, _) where request.protocolName == Self.protocolName,
            .expired(let request) where request.protocolName == Self.protocolName:
            waitsLogged.removeValue(forKey: request.deviceID)
        default:
            break
        }
    }

    func handlePairing(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        switch request.method {
        case "device.pair.list":
            hub.devices.list(protocolName: Self.protocolName) { [self] result in
                let paired = ((try? result.get()) ?? []).map { device in
                    PairingList.Paired(
                        deviceId: device.id,
                        publicKey: device.publicKey,
                        role: device.role,
                        scopes: device.scopes,
                        status: device.status.rawValue,
                        createdAtMs: device.createdAt
                    )
                }
                let waiting = hub.devices.pairing.requests(protocolName: Self.protocolName).compactMap(Self.pendingEntry)
                socket.reply(request.id, PairingList(pending: waiting, paired: paired))
            }
        case "device.pair.approve", "device.pair.reject":
            guard let requestID = request.params(as: PairingDecisionParams.self)?.requestId, let pending = hub.devices.pairing.request(id: requestID),
                pending.protocolName == Self.protocolName
            else { return socket.fail(request.id, .unknownRequestID) }
            let approve = request.method == "device.pair.approve"
            hub.devices.pairing.decide(requestID, approve: approve, userID: nil) { _ in
                socket.reply(request.id, PairingDecision(requestId: requestID, deviceId: pending.deviceID, approved: approve))
            }
        case "device.token.rotate", "device.token.revoke":
            let params = request.params(as: DeviceParams.self)
            guard let deviceID = params?.deviceId, let role = params?.role else { return socket.fail(request.id, .deviceAndRoleRequired) }
            // Non-admins manage only their own device.
            guard socket.has("operator.admin") || deviceID == socket.deviceID else { return socket.fail(request.id, .tokenChangeDenied) }
            request.method == "device.token.rotate"
                ? rotate(deviceID, role: role, request.id, on: socket) : revoke(deviceID, role: role, request.id, on: socket)
        default:
            guard let deviceID = request.params(as: DeviceParams.self)?.deviceId else { return socket.fail(request.id, .deviceIDRequired) }
            remove(deviceID, request.id, on: socket)
        }
    }

    /// Unpairs a gateway device (other protocols' devices are the operator's): its tokens go and
    /// its sockets close; like a new device, it may ask to pair again (`clawrelay devices revoke`
    /// refuses that too).
    private func remove(_ deviceID: String, _ requestID: String, on socket: GatewaySocket) {
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot -> Bool in
            guard let device = snapshot.device, device.protocolName == Self.protocolName else { return false }
            snapshot.tokens = [:]
            if device.status == .approved { snapshot.device?.status = .unpaired }
            return true
        } completion: { [self] result in
            guard case .success(true) = result else { return socket.fail(requestID, .unknownGatewayDevice) }
            cutOff(deviceID: deviceID, role: nil, reason: "device removed")
            socket.reply(requestID, DeviceRemoved(deviceId: deviceID))
        }
    }

    /// A new token for (device, role) replaces the old one; it is shown only to the device itself
    /// when it asked with its own token. The role's sockets are closed (they used the old token).
    private func rotate(_ deviceID: String, role: String, _ requestID: String, on socket: GatewaySocket) {
        let (token, now) = (GatewayDeviceDecision.newDeviceToken(), clock.nowMillis())
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
            guard case .success(let scopes?) = result else { return socket.fail(requestID, .tokenChangeDenied) }
            let shown = socket.deviceID == deviceID && socket.peer?.usedDeviceToken == true ? token : nil
            socket.reply(requestID, TokenRotated(deviceId: deviceID, role: role, scopes: scopes, rotatedAtMs: now, token: shown))
            cutOff(deviceID: deviceID, role: role, reason: "device token changed")
        }
    }

    private func revoke(_ deviceID: String, role: String, _ requestID: String, on socket: GatewaySocket) {
        let now = clock.nowMillis()
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot -> Bool in
            guard snapshot.tokens[role] != nil else { return false }
            snapshot.tokens[role]?.tokenHash = nil
            snapshot.tokens[role]?.revokedAt = now
            return true
        } completion: { [self] result in
            guard case .success(true) = result else { return socket.fail(requestID, .tokenChangeDenied) }
            socket.reply(requestID, TokenRevoked(deviceId: deviceID, role: role, revokedAtMs: now))
            cutOff(deviceID: deviceID, role: role, reason: "device token changed")
        }
    }

    /// Closes the device's sockets (of one role, when given), saying why in the close frame.
    func cutOff(deviceID: String, role: String?, reason: String) {
        logger.info(
            "device cut off; closing its sockets",
            metadata: ["protocol": "gateway", "device": "\(deviceID)", "role": "\(role ?? "every role")"]
        )
        for socket in sockets.values where socket.deviceID == deviceID && socket.isConnected && (role == nil || socket.peer?.role == role) {
            socket.connection.close(code: GatewayCloseCode.policyViolation.rawValue, reason: reason)
        }
    }
}
