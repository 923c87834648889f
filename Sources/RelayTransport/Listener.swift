import Foundation

/// One listening socket (an lws vhost) and the handler that owns its traffic.
public struct ListenerConfig: Sendable {
    public var name: String
    public var host: String
    public var port: Int
    /// PEM certificate and key; both set turns TLS on.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// Paths on which a WebSocket upgrade is accepted (a plain request there gets 426).
    public var webSocketPaths: Set<String>
    /// Accept an upgrade on any path, not only `webSocketPaths` (Companion clients may use any).
    public var acceptsAnyWebSocketPath = false
    /// Request headers lws does not know that handlers want to read (lowercase names, e.g. `x-device-id`).
    public var customHeaders: [String] = []
    /// Largest reassembled WebSocket message; bigger ones close the socket with 1009.
    public var maxMessageBytes: Int
    /// Unsent bytes a socket may hold; past it the peer is a slow consumer: what is queued is
    /// dropped and the socket closed with 1008 (and dropped 5 s later if it still reads nothing).
    public var maxBufferedBytes = 64 << 20
    /// Server ping period; zero turns pings off.
    public var pingIntervalMillis: Int
    /// A socket that has not answered a ping for this long is closed.
    public var pongTimeoutMillis: Int

    public init(
        name: String,
        host: String,
        port: Int,
        tlsCertificatePath: String? = nil,
        tlsKeyPath: String? = nil,
        webSocketPaths: Set<String> = [],
        maxMessageBytes: Int = 1 << 20,
        pingIntervalMillis: Int = 30_000,
        pongTimeoutMillis: Int = 90_000
    ) {
        self.name = name
        self.host = host
        self.port = port
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
        self.webSocketPaths = webSocketPaths
        self.maxMessageBytes = maxMessageBytes
        self.pingIntervalMillis = pingIntervalMillis
        self.pongTimeoutMillis = pongTimeoutMillis
    }
}

/// The request line and headers of a WebSocket upgrade or an HTTP request that handlers read.
public struct RequestHeaders: Sendable, Equatable {
    /// The query string without `?`, its arguments joined with `&`.
    public var query: String
    public var authorization: String?
    public var userAgent: String?
    /// The listener's `customHeaders` that were present, by lowercase name.
    public var custom: [String: String]

    public init(query: String = "", authorization: String? = nil, userAgent: String? = nil, custom: [String: String] = [:]) {
        self.query = query
        self.authorization = authorization
        self.userAgent = userAgent
        self.custom = custom
    }

    /// The value of query argument `name`, percent-decoded (`+` stays `+`).
    public func queryValue(_ name: String) -> String? {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).removingPercentEncoding ?? String(parts[1])
        }
        return nil
    }

    /// The credential of an `Authorization: Bearer <token>` header.
    public var bearerToken: String? {
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else { return nil }
        return String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }
}

/// What a protocol bridge implements to receive a listener's traffic.
///
/// - Important: every method is called on the service thread.
public protocol ListenerHandler: AnyObject {
    func handleHTTP(_ exchange: HTTPExchange)
    func webSocketOpened(_ connection: WebSocketConnection)
    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage)
    func webSocketClosed(_ connection: WebSocketConnection)
    /// The loop is about to close every socket with 1001 (graceful stop): last words go here.
    func serviceWillStop()
    /// The answer to a WebSocket upgrade refused before any socket exists (e.g. a 401 for a bad
    /// token: cheap for clients that retry every second); nil upgrades it.
    func refusal(ofWebSocket headers: RequestHeaders) -> HTTPResponse?
}

extension ListenerHandler {
    public func serviceWillStop() {}
    public func refusal(ofWebSocket headers: RequestHeaders) -> HTTPResponse? { nil }
}

public enum WebSocketMessage: Sendable {
    case text(String)
    case binary([UInt8])
}

/// Where a frame was going, for the audit log.
public enum FrameDirection: String, Sendable {
    case inbound = "in"
    case outbound = "out"
}

/// One frame or HTTP message seen at the transport edge.
public struct FrameRecord: Sendable {
    public enum Kind: String, Sendable {
        case webSocket = "ws"
        case http
    }
    public var timeMillis: Int64
    public var connectionID: UInt64
    public var listener: String
    public var direction: FrameDirection
    public var kind: Kind
    /// WebSocket opcode name (`text`, `binary`, `close`, `ping`) or the HTTP method / status line.
    public var opcode: String
    public var size: Int
    /// The payload, possibly cut; the audit writer redacts it.
    public var body: [UInt8]
    public var deviceID: String?
    public var userID: String?
}

/// Receives every frame the transport reads or writes.
///
/// - Important: called on the service thread; must not block.
public protocol FrameObserver: AnyObject {
    func observe(_ record: FrameRecord)
}
