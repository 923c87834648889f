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

/// Prometheus text exposition, built by hand: a handful of gauges and counters does not need a registry.
struct MetricsText {
    private(set) var text = ""

    mutating func add(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: Double)]) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        for sample in samples {
            let value = sample.value.rounded() == sample.value && abs(sample.value) < 1e15 ? String(Int64(sample.value)) : String(sample.value)
            text += sample.labels.isEmpty ? "\(name) \(value)\n" : "\(name){\(sample.labels)} \(value)\n"
        }
    }

    mutating func add(_ name: String, _ type: String, _ help: String, _ value: Double) {
        add(name, type, help, [("", value)])
    }

    /// A summary: per series, its quantiles (left out while it has no samples), `_sum` and `_count`.
    mutating func addSummary(
        _ name: String,
        _ help: String,
        _ series: [(labels: String, quantiles: [(Double, Double)], sum: Double, count: Double)]
    ) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) summary\n"
        for one in series {
            for (quantile, value) in one.quantiles { text += "\(name){\(one.labels),quantile=\"\(quantile)\"} \(value)\n" }
            text += "\(name)_sum{\(one.labels)} \(one.sum)\n\(name)_count{\(one.labels)} \(Int64(one.count))\n"
        }
    }
}
