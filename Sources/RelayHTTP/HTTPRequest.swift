/// One request for `HTTPClient`: a push to APNs, ntfy or a webhook, or an upstream REST call.
public struct HTTPRequest: Sendable {
    public var url: String
    public var method: String
    /// Sent in order; a name may repeat. A value may not contain CR or LF.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The whole exchange, connecting and queueing for a connection included; at least 1.
    public var timeoutMillis: Int
    /// Response body bytes kept; the rest is read, dropped and flagged (`HTTPResponse.isTruncated`).
    public var maxResponseBytes: Int
    /// Skip TLS peer and host verification (a self-signed server on a LAN or in tests).
    public var allowSelfSigned: Bool

    public init(
        url: String,
        method: String = "POST",
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        timeoutMillis: Int = 10_000,
        maxResponseBytes: Int = HTTPResponse.maxBodyBytes,
        allowSelfSigned: Bool = false
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeoutMillis = timeoutMillis
        self.maxResponseBytes = max(0, maxResponseBytes)
        self.allowSelfSigned = allowSelfSigned
    }
}

/// A response, whatever its status: a 4xx or 5xx is an answer from the server, not a failure.
public struct HTTPResponse: Sendable {
    /// The largest body kept unless the request says otherwise; the rest is read and dropped
    /// (push services answer in a few bytes).
    public static let maxBodyBytes = 64 * 1024

    public var status: Int
    /// Lower-cased names; when a name repeats, the last value wins.
    public var headers: [String: String]
    /// At most the request's `maxResponseBytes`.
    public var body: [UInt8]
    /// 1 for HTTP/1.x, 2 for HTTP/2.
    public var httpVersion: Int
    /// The server sent more than `maxResponseBytes`: `body` is only the start.
    public var isTruncated: Bool

    public init(status: Int, headers: [String: String], body: [UInt8], httpVersion: Int, isTruncated: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
        self.isTruncated = isTruncated
    }
}

/// Why a request got no response.
public enum HTTPFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// No response: connection refused, timeout, TLS verification, an unsupported URL scheme, too
    /// many requests outstanding, the client shutting down. The text is libcurl's, for operators.
    case transport(String)
    /// The request cannot be sent as given (a header with CR or LF, an empty method); nothing was sent.
    case invalidRequest(String)

    public var description: String {
        switch self {
        case .transport(let message): "transport: \(message)"
        case .invalidRequest(let message): "invalid request: \(message)"
        }
    }
}
