import Logging

/// An HTTP client on libcurl and one dedicated thread: push notifications (APNs over HTTP/2, ntfy
/// and webhooks over HTTP/1.1 or HTTP/2) and upstream accounts' REST calls (DiscoClaw).
///
/// Requests to one endpoint share a connection: over HTTP/2 (negotiated by ALPN on `https`)
/// concurrent requests are multiplexed on one, and idle connections stay open for the next send,
/// so many sends cost one TLS handshake. Redirects are not followed; only `http` and `https`
/// URLs are accepted; TLS peer and host verification are on unless a request allows a
/// self-signed certificate.
public final class HTTPClient: Sendable {
    private let thread: HTTPThread

    /// - Parameters:
    ///   - caFile: a PEM bundle of CAs trusted besides the system's (for a private CA in tests).
    ///   - maxOutstanding: requests queued or in flight at once; past it `send` fails at once.
    ///   - name: the thread's name, in logs and refusals ("push", "upstream").
    public init(caFile: String? = nil, maxOutstanding: Int = 10_000, name: String = "push", logger: Logger) {
        thread = HTTPThread(name: name, caFile: caFile, maxOutstanding: maxOutstanding, logger: logger)
    }

    deinit { thread.stop() }

    /// Sends `request`; `completion` runs exactly once with the response (any status) or why there is none.
    ///
    /// - Important: callable from any thread. `completion` runs on the client's thread (hop to your
    ///   own loop there, and do not block it), except when the request is refused at once (client
    ///   shut down, too many outstanding), when it runs on the caller's thread before `send` returns.
    public func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, HTTPFailure>) -> Void) {
        thread.submit(request, completion: completion)
    }

    /// Stops the client's thread: queued and in-flight requests fail with "shutting down", later ones
    /// fail at once. Returns when the thread has ended (at once when called on it). Idempotent.
    public func shutdown() { thread.stop() }
}
