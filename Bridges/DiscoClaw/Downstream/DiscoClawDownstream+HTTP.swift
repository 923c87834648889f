import Foundation
import RelayCore
import RelayTransport

extension DiscoClawDownstream {
    /// A request's route: what the path names, before authentication.
    enum Route {
        case health, register, addDevice, listDevices, me
        case removeDevice(String)
        case listConversations, createConversation
        case conversation(String)
        case updateConversation(String)
        case deleteConversation(String)
        case listMessages(String)
        case postMessage(String)
        case sync

        init?(method: String, path: String) {
            let parts = path.split(separator: "/", omittingEmptySubsequences: true).map { String($0).removingPercentEncoding ?? String($0) }
            switch (method, parts.first, parts.count) {
            case ("GET", "health", 1): self = .health
            case ("POST", "auth", 2) where parts[1] == "register": self = .register
            case ("POST", "auth", 2) where parts[1] == "devices": self = .addDevice
            case ("GET", "auth", 2) where parts[1] == "devices": self = .listDevices
            case ("GET", "auth", 2) where parts[1] == "me": self = .me
            case ("DELETE", "auth", 3) where parts[1] == "devices": self = .removeDevice(parts[2])
            case ("GET", "conversations", 1): self = .listConversations
            case ("POST", "conversations", 1): self = .createConversation
            case ("GET", "conversations", 2): self = .conversation(parts[1])
            case ("PATCH", "conversations", 2): self = .updateConversation(parts[1])
            case ("DELETE", "conversations", 2): self = .deleteConversation(parts[1])
            case ("GET", "conversations", 3) where parts[2] == "messages": self = .listMessages(parts[1])
            case ("POST", "conversations", 3) where parts[2] == "messages": self = .postMessage(parts[1])
            case ("GET", "sync", 1): self = .sync
            default: return nil
            }
        }
    }

    public func handleHTTP(_ exchange: HTTPExchange) {
        if exchange.isWebSocketUpgradePath {
            return exchange.respond(DiscoClawWire.failure(426, "Upgrade Required", "/ws is the WebSocket endpoint"))
        }
        guard let route = Route(method: exchange.method, path: exchange.path) else { return exchange.respond(DiscoClawWire.notFound) }
        switch route {
        case .health:
            return exchange.respond(
                DiscoClawWire.json(
                    200,
                    .object(["ok": .bool(true), "uptime": .int((clock.nowMillis() - startedAt) / 1000), "connections": .int(Int64(sockets.count))])
                )
            )
        case .register:
            return withBody(exchange) { [self] body in register(body, exchange) }
        default:
            break
        }
        let presented = exchange.headers.bearerToken ?? exchange.headers.queryValue("token")
        guard let presented, !presented.isEmpty else { return exchange.respond(DiscoClawWire.error(401, "Missing authorization token")) }
        guard let device = device(presenting: presented) else { return exchange.respond(DiscoClawWire.error(401, "Invalid token")) }
        touch(device)
        withBody(exchange) { [self] body in
            switch route {
            case .health, .register: break
            case .addDevice: addDevice(body, for: device, exchange)
            case .listDevices: listDevices(for: device, exchange)
            case .me: describe(device, exchange)
            case .removeDevice(let id): removeDevice(id, for: device, exchange)
            case .listConversations: listConversations(for: device, archived: exchange.headers.queryValue("archived"), exchange)
            case .createConversation: createConversation(body, for: device, exchange)
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
                exchange.respond(DiscoClawWire.failure(413, "Payload Too Large", "the body is larger than \(settings.maxBodyBytes) bytes"))
            case .failure:
                exchange.respond(DiscoClawWire.badRequest("the body could not be read"))
            case .success(.bytes(let bytes)):
                guard case .object(let object)? = JSONValue.parse(bytes) else {
                    return exchange.respond(DiscoClawWire.badRequest("body must be a JSON object"))
                }
                handle(object)
            case .success(.file):
                exchange.respond(DiscoClawWire.failure(500, "Internal Server Error", "unexpected body"))
            }
        }
    }

    /// A conversation of the device's user, or a 404 answered.
    func withConversation(_ id: String, of device: Device, _ exchange: HTTPExchange, _ handle: @escaping (Conversation) -> Void) {
        guard id.utf8.count <= 128 else { return exchange.respond(DiscoClawWire.notFound) }
        hub.conversations.load(id: id) { result in
            guard case .success(let conversation?) = result, conversation.userID == device.userID else {
                return exchange.respond(DiscoClawWire.notFound)
            }
            handle(conversation)
        }
    }

    /// A query argument that is not what it must be; `message` is answered with 400.
    struct BadQuery: Error {
        var message: String
    }

    /// An integer query argument: absent → nil; not a non-negative integer → `BadQuery`.
    static func integer(_ name: String, in exchange: HTTPExchange) -> Result<Int64?, BadQuery> {
        guard let text = exchange.headers.queryValue(name), !text.isEmpty else { return .success(nil) }
        guard let value = Int64(text), value >= 0 else { return .failure(BadQuery(message: "\(name) must be a non-negative integer")) }
        return .success(value)
    }

    func storeFailed(_ exchange: HTTPExchange, _ error: any Error) {
        logger.error("DiscoClaw request failed in the store", metadata: ["path": "\(exchange.path.prefix(100))", "error": "\(error)"])
        exchange.respond(DiscoClawWire.failure(500, "Internal Server Error", "the store failed; try again"))
    }
}
