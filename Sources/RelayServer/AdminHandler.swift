import Foundation
import RelayCore
import RelayTransport

/// `GET /healthz` (status, version, uptime) and Prometheus `GET /metrics` on the admin listener.
final class AdminHandler: ListenerHandler {
    private let metrics: () -> String
    private let startedAt = Date()

    init(metrics: @escaping () -> String) { self.metrics = metrics }

    func handleHTTP(_ exchange: HTTPExchange) {
        switch (exchange.method, exchange.path) {
        case ("GET", "/healthz"):
            let health: JSONValue = .object([
                "status": .string("ok"), "version": .string(RelayVersion.current),
                "uptimeSeconds": .int(Int64(Date().timeIntervalSince(startedAt))),
            ])
            exchange.respond(.json(200, health.encoded()))
        case ("GET", "/metrics"):
            exchange.respond(.text(200, metrics(), contentType: "text/plain; version=0.0.4; charset=utf-8"))
        default:
            exchange.respond(.json(404, #"{"error":"not found"}"#))
        }
    }

    func webSocketOpened(_ connection: WebSocketConnection) { connection.close(code: 1008, reason: "no WebSocket here") }
    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {}
    func webSocketClosed(_ connection: WebSocketConnection) {}
}
