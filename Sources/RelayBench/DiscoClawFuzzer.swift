import Foundation
import RelayCore

/// DiscoClaw's REST surface under mutated JSON bodies and query arguments, before and after
/// authentication. Blocking sockets, one request per connection, on the calling thread.
struct DiscoClawFuzzer {
    let port: Int
    private var mutator = FrameMutator(seeds: Self.seeds)

    init(port: Int) { self.port = port }

    static let seeds = [
        #"{"name":"fuzz","platform":"ios","setupToken":"0123456789abcdef0123"}"#,
        #"{"title":"t","backend":"echo","archived":true}"#,
        #"{"content":"hi","clientId":"8F0C1E57-2B0A-4C55-9C86-2F1D4C3B7A10"}"#,
        #"{"name":"second","platform":"macos"}"#,
    ]

    /// Registers a device with the setup token; returns its bearer token.
    func register(setupToken: String) -> String? {
        let body = #"{"name":"bench","platform":"ios","setupToken":"\#(setupToken)"}"#
        guard let answer = exchange("POST", "/auth/register", token: nil, body: Array(body.utf8)), answer.status == 201,
            let token = JSONValue.parse(answer.body)?["token"]?.stringValue
        else { return nil }
        return token
    }

    /// Creates a conversation; returns its id.
    func conversation(token: String) -> String? {
        guard let answer = exchange("POST", "/conversations", token: token, body: Array(#"{"title":"fuzz"}"#.utf8)), answer.status == 201 else {
            return nil
        }
        return JSONValue.parse(answer.body)?["id"]?.stringValue
    }

    /// Sends `count` mutated requests; returns how they were answered (status class or closed).
    mutating func run(count: Int, token: String?, conversationID: String) -> [String: Int] {
        let routes = [
            ("POST", "/auth/register"), ("POST", "/auth/devices"), ("GET", "/auth/devices"), ("GET", "/auth/me"), ("DELETE", "/auth/devices/x"),
            ("GET", "/conversations?archived=true"), ("POST", "/conversations"), ("GET", "/conversations/\(conversationID)"),
            ("PATCH", "/conversations/\(conversationID)"), ("GET", "/conversations/\(conversationID)/messages?limit=-1&before=x"),
            ("GET", "/conversations/\(conversationID)/messages?limit=99999999999999999999"), ("POST", "/conversations/\(conversationID)/messages"),
            ("GET", "/sync?since=18446744073709551616"), ("GET", "/sync?since=0"), ("POST", "/conversations/%00/messages"),
        ]
        var outcomes: [String: Int] = [:]
        for index in 0..<count {
            let (method, path) = routes[Int(mutator.next() % UInt64(routes.count))]
            let body: [UInt8]
            switch mutator.frame(index) {
            case .text(let text): body = Array(text.utf8)
            case .bytes(let bytes), .binary(let bytes): body = bytes
            }
            let answer = exchange(method, path, token: token, body: method == "GET" ? [] : body)
            outcomes[answer.map { "\($0.status / 100)xx" } ?? "closed", default: 0] += 1
        }
        return outcomes
    }

    /// One request with `Connection: close`; nil when the relay closed without an answer.
    private func exchange(_ method: String, _ path: String, token: String?, body: [UInt8]) -> (status: Int, body: [UInt8])? {
        guard let fd = connectLoopback(port: port) else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while response.count < 1 << 20 {
            let read = recv(fd, &buffer, buffer.count, 0)
            if read <= 0 { break }
            response += buffer[0..<read]
        }
        guard response.count > 12, response.starts(with: Array("HTTP/1.1 ".utf8)), let status = Int(String(decoding: response[9..<12], as: UTF8.self))
        else {
            return nil
        }
        let separator = Array("\r\n\r\n".utf8)
        let split = (0...(response.count - 4)).first { response[$0..<($0 + 4)].elementsEqual(separator) } ?? response.count - 4
        return (status, Array(response[(split + 4)...]))
    }
}
