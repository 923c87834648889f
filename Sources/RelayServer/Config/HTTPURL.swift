/// `http://host:port[/prefix]` or `https://…`: where an upstream server's REST API is; its
/// WebSocket is on the same host and port, under the same prefix.
public struct HTTPURL: Sendable, Equatable, CustomStringConvertible {
    public var tls: Bool
    public var host: String
    public var port: Int
    /// `""` or `/prefix`, without a trailing slash.
    public var prefix: String

    /// nil for anything but an http(s) URL with a host; user info, a query or a fragment are refused
    /// (a token belongs in `token`, not in the URL).
    public init?(_ text: String) {
        let tls: Bool
        let rest: Substring
        if text.lowercased().hasPrefix("http://") {
            tls = false
            rest = text.dropFirst(7)
        } else if text.lowercased().hasPrefix("https://") {
            tls = true
            rest = text.dropFirst(8)
        } else {
            return nil
        }
        guard !rest.contains(where: { $0 == "@" || $0 == "?" || $0 == "#" || $0.isWhitespace }) else { return nil }
        let hostPort = rest.prefix { $0 != "/" }
        var prefix = String(rest.dropFirst(hostPort.count))
        while prefix.hasSuffix("/") { prefix.removeLast() }
        let withPort = hostPort.hasSuffix("]") || !hostPort.contains(":") ? "\(hostPort):\(tls ? 443 : 80)" : String(hostPort)
        guard let endpoint = ListenEndpoint(withPort) else { return nil }
        self.tls = tls
        host = endpoint.host
        port = endpoint.port
        self.prefix = prefix
    }

    /// The base the REST paths go after, e.g. `https://[::1]:4242/claw`.
    public var description: String {
        "\(tls ? "https" : "http")://\(ListenEndpoint(host: host, port: port))\(prefix)"
    }
}
