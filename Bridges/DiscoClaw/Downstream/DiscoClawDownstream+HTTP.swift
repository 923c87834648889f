import DiscoClawWire
import RelayCore
import RelayTransport

extension DiscoClawDownstream {
    public func handleHTTP(_ exchange: HTTPExchange) {
        if exchange.isWebSocketUpgradePath { return exchange.respond(DiscoClawReply.error(.upgradeRequired)) }
        guard let route = DiscoClawRoute(method: exchange.method, path: exchange.path) else {
            return exchange.respond(DiscoClawReply.error(.notFound))
        }
        switch route {
        case .health:
            let health = DiscoClawHealth(uptime: (clock.nowMillis() - startedAt) / 1000, connections: Int64(sockets.count))
            return exchange.respond(DiscoClawReply.json(200, health))
        case .register:
            return withBody(exchange) { [self] body in register(DiscoClawDeviceRequest(json: body), exchange) }
        default:
            break
        }
        let presented = exchange.headers.bearerToken ?? exchange.headers.queryValue("token")
        guard let presented, !presented.isEmpty else { return exchange.respond(DiscoClawReply.error(.missingToken)) }
        device(presenting: presented) { [self] device in
            guard let device else { return exchange.respond(DiscoClawReply.error(.invalidToken)) }
            handle(route, from: device, exchange)
        }
    }

    private func handle(_ route: DiscoClawRoute, from device: DiscoClawDevice, _ exchange: HTTPExchange) {
        exchange.deviceID = device.id
        exchange.userID = device.userID
        touch(device)
        withBody(exchange) { [self] body in
            switch route {
            case .health, .register: break
            case .addDevice: addDevice(DiscoClawDeviceRequest(json: body), for: device, exchange)
            case .listDevices: listDevices(for: device, exchange)
            case .me: exchange.respond(DiscoClawReply.json(200, device.me))
            case .removeDevice(let id): removeDevice(id, for: device, exchange)
            case .listConversations: listConversations(for: device, archived: exchange.headers.queryValue("archived"), exchange)
            case .createConversation: createConversation(DiscoClawConversationRequest(json: body), for: device, exchange)
            case .conversation(let id): showConversation(id, for: device, exchange)
            case .updateConversation(let id): updateConversation(id, body, for: device, exchange)
            case .deleteConversation(let id): deleteConversation(id, for: device, exchange)
            case .listMessages(let id): listMessages(id, for: device, exchange)
            case .postMessage(let id): postMessage(id, body, for: device, exchange)
            case .sync: sync(for: device, exchange)
            }
        }
    }

    /// The request's JSON object body (`[:]` when there is none); 400 or 413 otherwise.
    private func withBody(_ exchange: HTTPExchange, _ handle: @escaping ([String: JSONValue]) -> Void) {
        guard ["POST", "PATCH", "PUT"].contains(exchange.method), (exchange.contentLength ?? 0) > 0 else { return handle([:]) }
        exchange.receiveBody(limit: settings.maxBodyBytes, into: .memory) { [settings] result in
            switch result {
            case .failure(.tooLarge):
                exchange.respond(DiscoClawReply.error(.payloadTooLarge(maxBytes: settings.maxBodyBytes)))
            case .failure:
                exchange.respond(DiscoClawReply.error(.bodyUnreadable))
            case .success(.bytes(let bytes)):
                guard case .object(let object)? = JSONValue.parse(bytes) else { return exchange.respond(DiscoClawReply.error(.bodyNotObject)) }
                handle(object)
            case .success(.file):
                exchange.respond(DiscoClawReply.error(.unexpectedBody))
            }
        }
    }

    /// A conversation of the device's user, or a 404 answered.
    func withConversation(_ id: String, of device: DiscoClawDevice, _ exchange: HTTPExchange, _ handle: @escaping (Conversation) -> Void) {
        guard id.utf8.count <= 128 else { return exchange.respond(DiscoClawReply.error(.notFound)) }
        hub.conversations.load(id: id) { result in
            guard case .success(let conversation?) = result, conversation.userID == device.userID else {
                return exchange.respond(DiscoClawReply.error(.notFound))
            }
            handle(conversation)
        }
    }

    func storeFailed(_ exchange: HTTPExchange, _ error: any Error) {
        logger.error("DiscoClaw request failed in the store", metadata: ["path": "\(exchange.path.prefix(100))", "error": "\(error)"])
        exchange.respond(DiscoClawReply.error(.storeFailed))
    }
}
