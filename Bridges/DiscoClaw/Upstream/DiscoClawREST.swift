import DiscoClawWire
import Foundation
import RelayCore
import RelayHTTP
import RelayTransport

/// An upstream account's REST calls to its DiscoClaw server over `HTTPClient`: bearer token,
/// JSON bodies, capped responses, the answer back on the loop. Each request and response goes to
/// the audit like a frame (under the `client` listener, as upstream sockets' frames do), where
/// the token in the authorization line and in a registration reply is redacted.
///
/// - Important: loop thread only.
final class DiscoClawREST {
    enum Outcome {
        /// The server answered (any status) with `body` (read as the model's types where it is used).
        case answered(status: Int, body: [UInt8])
        /// No usable answer: connection refused, timeout, TLS, an oversized body.
        case failed(String)
    }

    /// Where upstream traffic shows in the audit: the client vhost's name.
    static let auditListener = "client"
    /// `/sync` pages are the largest replies; a server sending more is cut off, not believed.
    static let maxResponseBytes = 4 << 20
    static let timeoutMillis = 15_000
    /// Bytes of a response body the audit keeps, as for served HTTP.
    private static let auditedBodyBytes = 4096

    /// `http(s)://host:port[/prefix]`, without a trailing slash.
    let baseURL: String
    private let allowSelfSigned: Bool
    private let client: HTTPClient
    private let loop: ServiceLoop
    /// The device token; nil until registered.
    var token: String?
    /// The device the token belongs to, when known: the audit names it on every call.
    var deviceID: String?

    init(baseURL: String, allowSelfSigned: Bool, client: HTTPClient, loop: ServiceLoop) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.allowSelfSigned = allowSelfSigned
        self.client = client
        self.loop = loop
    }

    /// `path` starts with `/` and is already percent-encoded where it needs to be.
    func call(_ method: String, _ path: String, body: (any Encodable)? = nil, authorized: Bool = true, completion: @escaping (Outcome) -> Void) {
        var headers: [(name: String, value: String)] = [("Accept", "application/json")]
        let bytes = body.map { DiscoClawJSON.bytes($0) } ?? []
        if body != nil { headers.append(("Content-Type", "application/json")) }
        if authorized, let token { headers.append(("Authorization", "Bearer \(token)")) }
        let request = HTTPRequest(
            url: baseURL + path,
            method: method,
            headers: headers,
            body: bytes,
            timeoutMillis: Self.timeoutMillis,
            maxResponseBytes: Self.maxResponseBytes,
            allowSelfSigned: allowSelfSigned
        )
        let connectionID = loop.newOutsideConnectionID()
        var line = "\(method) \(path)"
        if authorized, let token { line += "\nauthorization: Bearer \(token)" }
        audit(connectionID, .outbound, method, Array(line.utf8), size: bytes.count)
        let bound = LoopBound((self, completion), loop: loop)
        client.send(request) { [loop] result in
            loop.execute {
                let (rest, completion) = bound.value
                if case .success(let response) = result {
                    rest.audit(
                        connectionID,
                        .inbound,
                        "\(response.status)",
                        Array(response.body.prefix(Self.auditedBodyBytes)),
                        size: response.body.count
                    )
                }
                completion(Self.outcome(result))
            }
        }
    }

    private func audit(_ connectionID: UInt64, _ direction: FrameDirection, _ opcode: String, _ body: [UInt8], size: Int) {
        loop.observeOutsideHTTP(
            connectionID: connectionID,
            listener: Self.auditListener,
            direction: direction,
            opcode: opcode,
            body: body,
            size: size,
            deviceID: deviceID
        )
    }

    static func outcome(_ result: Result<RelayHTTP.HTTPResponse, HTTPFailure>) -> Outcome {
        switch result {
        case .failure(let failure):
            return .failed("\(failure)")
        case .success(let response) where response.isTruncated:
            return .failed("the server answered \(response.status) with more than \(maxResponseBytes) bytes")
        case .success(let response):
            return .answered(status: response.status, body: response.body)
        }
    }

    /// The reason in an error body, either shape.
    static func errorText(_ body: [UInt8]) -> String? { DiscoClawJSON.decode(DiscoClawErrorBody.self, from: body)?.reason }

    /// One path segment (a conversation id from the server), percent-encoded.
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        ) ?? ""
    }
}
