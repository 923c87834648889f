import GatewayWire
import RelayCore

/// The seed's additions: `gateway.discover` (no auth), `device.pair` and `device.unpair`, where a
/// "bot" is one backend the relay fronts.
extension GatewayDownstream {
    func discover(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let bots = hub.router.backends.keys.sorted().map(Discovery.Bot.init(name:))
        socket.reply(request.id, Discovery(gatewayFingerprint: fingerprint, gatewayName: settings.name, bots: bots))
    }

    /// Pairs a device with bots: allowed for an operator holding `operator.pairing`, or before
    /// `connect` with a one-time token from `clawrelay pair-link`.
    func pairBots(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let params = request.params(as: BotPairingParams.self)
        guard let deviceID = params?.deviceId, !deviceID.isEmpty else { return socket.fail(request.id, .deviceIDRequired) }
        let available = Set(hub.router.backends.keys)
        let requested: [String]
        switch params?.requestedBots ?? .named([]) {
        case .all: requested = available.sorted()
        case .named(let bots): requested = bots
        }
        guard !requested.isEmpty, requested.allSatisfy(available.contains) else { return socket.fail(request.id, .unknownBots) }
        let linkHash = params?.token.map { Digest.sha256Hex($0) }
        guard socket.isConnected ? socket.has("operator.pairing") : linkHash != nil else { return socket.fail(request.id, .pairingTokenRequired) }
        let tokens = requested.map { ($0, GatewayDeviceDecision.newDeviceToken()) }
        let requiresLink = !socket.isConnected
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID, pairLinkHash: requiresLink ? linkHash : nil)) { snapshot -> Bool in
            if requiresLink {
                guard snapshot.pairLinkUsable else { return false }
                snapshot.consumesPairLink = true
            }
            for (bot, token) in tokens { snapshot.bots[bot] = Digest.sha256Hex(token) }
            return true
        } completion: { [self] result in
            guard case .success(true) = result else { return socket.fail(request.id, .pairingTokenRefused) }
            let pairings = tokens.map { bot, token in BotPairings.Pairing(bot: bot, token: token) }
            socket.reply(request.id, BotPairings(pairings: pairings, gatewayFingerprint: fingerprint))
        }
    }

    func unpairBots(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let params = request.params(as: BotUnpairingParams.self)
        guard socket.has("operator.pairing") || socket.deviceID == params?.deviceId else {
            return socket.fail(request.id, .missingScope("operator.pairing"))
        }
        guard let deviceID = params?.deviceId else { return socket.fail(request.id, .deviceIDRequired) }
        let bots: [String]?
        switch params?.botIds ?? .named([]) {
        case .all: bots = nil
        case .named(let named): bots = named
        }
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot -> Int in
            let removed = bots.map { $0.filter { snapshot.bots[$0] != nil } } ?? Array(snapshot.bots.keys)
            for bot in removed { snapshot.bots.removeValue(forKey: bot) }
            return removed.count
        } completion: { result in
            guard case .success(let removed) = result, removed > 0 else { return socket.fail(request.id, .noBotPairing) }
            socket.reply(request.id, BotsRemoved(deviceId: deviceID, removed: Int64(removed)))
        }
    }
}
