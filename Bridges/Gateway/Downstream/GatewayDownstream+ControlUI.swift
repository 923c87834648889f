import GatewayWire
import RelayTransport

/// Plain HTTP on the gateway port: the Control UI build the operator points `[gateway]
/// control_ui_dir` at (the transport's `StaticSite` serves it, as OpenClaw's gateway serves its
/// own at `/`); without one, 426, since the port is a WebSocket endpoint.
extension GatewayDownstream {
    static func controlUI(_ settings: GatewaySettings) -> StaticSite? {
        settings.controlUIDirectory.flatMap { try? StaticSite(directory: $0) }
    }

    public func handleHTTP(_ exchange: HTTPExchange) {
        guard let site = controlUI else {
            return exchange.respond(.json(426, #"{"error":"this is an OpenClaw gateway WebSocket endpoint"}"#))
        }
        exchange.respond(site.response(method: exchange.method, path: exchange.path))
    }
}
