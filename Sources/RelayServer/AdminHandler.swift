import Foundation
import RelayCore
import RelayTransport

/// `GET /healthz` (status, version, uptime) and Prometheus `GET /metrics` on the admin listener;
/// `HEAD` answers as `GET` does, without the body (the transport leaves it out).
final class AdminHandler: ListenerHandler {
    private let metrics: () -> String
    private let startedAt = Date()

    init(metrics: @escaping () -> String) { self.metrics = metrics }

    func handleHTTP(_ exchange: HTTPExchange) {
        let path = exchange.path
        guard path == "/healthz" || path == "/metrics" else { return exchange.respond(.json(404, #"{"error":"not found"}"#)) }
        guard exchange.method == "GET" || exchange.method == "HEAD" else {
            var refused = HTTPResponse.json(405, #"{"error":"\#(path) answers GET and HEAD"}"#)
            refused.headers = [("allow", "GET, HEAD")]
            return exchange.respond(refused)
        }
        if path == "/metrics" { return exchange.respond(.text(200, metrics(), contentType: "text/plain; version=0.0.4; charset=utf-8")) }
        let health: JSONValue = .object([
            "status": .string("ok"), "version": .string(RelayVersion.current), "uptimeSeconds": .int(Int64(Date().timeIntervalSince(startedAt))),
        ])
        exchange.respond(.json(200, health.encoded()))
    }

    func webSocketOpened(_ connection: WebSocketConnection) { connection.close(code: 1008, reason: "no WebSocket here") }
    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {}
    func webSocketClosed(_ connection: WebSocketConnection) {}
}
