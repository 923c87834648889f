import RelayCore

/// The seed's additions: `gateway.discover` (no auth), `device.pair` and `device.unpair`, where a
/// "bot" is one backend the relay fronts.
extension GatewayDownstream {
    func discover(_ request: GatewayRequest, on session: GatewaySession) {
        let bots = hub.router.backends.keys.sorted().map { name in
            JSONValue.object(["botId": .string(name), "name": .string(name), "emoji": .string("🤖"), "status": .string("online")])
        }
        session.send(
            GatewayFrame.ok(
                request.id,
                .object([
                    "gatewayFingerprint": .string(fingerprint), "gatewayName": .string(settings.name), "bots": .array(bots),
                    "pairingRequired": .bool(true),
                ])
            )
        )
    }

    /// Pairs a device with bots: allowed for an operator holding `operator.pairing`, or before
    /// `connect` with a one-time token from `clawrelay pair-link`.
    func pairBots(_ request: GatewayRequest, on session: GatewaySession) {
        guard let deviceID = request.string("deviceId"), !deviceID.isEmpty else {
            return session.fail(request.id, .invalid("deviceId required"), close: nil)
        }
        let available = Set(hub.router.backends.keys)
        let requested: [String]
        if request.params["requestedBots"]?.stringValue == "*" {
            requested = available.sorted()
        } else {
            requested = request.strings("requestedBots")
        }
        guard !requested.isEmpty, requested.allSatisfy(available.contains) else {
            return session.fail(request.id, .invalid("requestedBots must name configured bots or be \"*\""), close: nil)
        }
        let linkHash = request.string("token").map { Digest.sha256Hex($0) }
        guard session.isConnected ? session.has("operator.pairing") : linkHash != nil else {
            return session.fail(request.id, GatewayError(code: .notPaired, message: "a pairing token or operator.pairing is required"), close: nil)
        }
        let tokens = requested.map { ($0, Self.newDeviceToken()) }
        let requiresLink = !session.isConnected
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID, pairLinkHash: requiresLink ? linkHash : nil)) { snapshot -> Bool in
            if requiresLink {
                guard snapshot.pairLinkUsable else { return false }
                snapshot.consumesPairLink = true
            }
            for (bot, token) in tokens { snapshot.bots[bot] = Digest.sha256Hex(token) }
            return true
        } completion: { [self] result in
            guard case .success(true) = result else {
                return session.fail(request.id, GatewayError(code: .notPaired, message: "the pairing token is unknown, used or expired"), close: nil)
            }
            let pairings = tokens.map { bot, token in
                JSONValue.object(["botId": .string(bot), "token": .string(token), "name": .string(bot), "emoji": .string("🤖")])
            }
            session.send(GatewayFrame.ok(request.id, .object(["pairings": .array(pairings), "gatewayFingerprint": .string(fingerprint)])))
        }
    }

    func unpairBots(_ request: GatewayRequest, on session: GatewaySession) {
        guard session.has("operator.pairing") || session.deviceID == request.string("deviceId") else {
            return session.fail(request.id, .invalid("missing scope operator.pairing"), close: nil)
        }
        guard let deviceID = request.string("deviceId") else { return session.fail(request.id, .invalid("deviceId required"), close: nil) }
        let bots: [String]? = request.params["botIds"]?.stringValue == "*" ? nil : request.strings("botIds")
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot -> Int in
            let removed = bots.map { $0.filter { snapshot.bots[$0] != nil } } ?? Array(snapshot.bots.keys)
            for bot in removed { snapshot.bots.removeValue(forKey: bot) }
            return removed.count
        } completion: { result in
            guard case .success(let removed) = result, removed > 0 else {
                return session.fail(request.id, .invalid("no bot pairing for that deviceId"), close: nil)
            }
            session.send(GatewayFrame.ok(request.id, .object(["deviceId": .string(deviceID), "removed": .int(Int64(removed))])))
        }
    }
}
