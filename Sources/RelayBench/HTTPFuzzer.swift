import Foundation

/// Malformed HTTP requests on raw TCP sockets: odd methods, bad and lying lengths, chunked
/// bodies, huge headers, truncated bodies, slowloris. Blocking sockets, on the calling thread.
struct HTTPFuzzer {
    private var state: UInt64 = 0x2545_F491_4F6C_DD1D

    private mutating func next() -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int(state >> 33)
    }

    static let methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "CONNECT", "TRACE", "FOO", "G\u{1}ET"]
    static let paths = [
        "/", "/ws", "/upload", "/download/a_x", "/version", "/api/projects", "/api/sessions", "/api/ask", "/healthz", "/metrics", "/auth/register",
        "/conversations", "/sync?since=-1",
        "/%00", "/../../etc/passwd", "/" + String(repeating: "a", count: 9_000), "*",
    ]

    /// Sends `count` requests to `port`; returns how each was answered (status class, closed or silent).
    mutating func run(port: Int, count: Int) -> [String: Int] {
        var outcomes: [String: Int] = [:]
        for index in 0..<count {
            guard let fd = connectLoopback(port: port) else {
                outcomes["connect-failed", default: 0] += 1
                continue
            }
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            _ = request(index).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var buffer = [UInt8](repeating: 0, count: 64)
            let read = recv(fd, &buffer, buffer.count, 0)
            let outcome: String
            if read > 12, buffer.starts(with: Array("HTTP/1.1 ".utf8)) {
                outcome = "\(Character(Unicode.Scalar(buffer[9])))xx"
            } else {
                outcome = read == 0 ? "closed" : "no-answer"
            }
            outcomes[outcome, default: 0] += 1
            close(fd)
        }
        return outcomes
    }

    private mutating func request(_ index: Int) -> [UInt8] {
        let method = Self.methods[next() % Self.methods.count]
        let path = Self.paths[next() % Self.paths.count]
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        var body: [UInt8] = []
        switch index % 9 {
        case 0: head += "Content-Length: -5\r\n"
        case 1: head += "Content-Length: 99999999999999999999\r\n"
        case 2:
            head += "Content-Length: 100000\r\n"
            body = Array(repeating: 0x41, count: 100)  // lies, then stops
        case 3:
            head += "Transfer-Encoding: chunked\r\n"
            body = Array("5\r\nhello\r\n0\r\n\r\n".utf8)
        case 4: head += "X-Big: " + String(repeating: "b", count: 20_000) + "\r\n"
        case 5: head += "Authorization: Bearer " + String(repeating: "x", count: 3_000) + "\r\n"
        case 6:
            head += "Content-Type: multipart/form-data; boundary=\(String(repeating: "-", count: 500))\r\nContent-Length: 10\r\n"
            body = Array("0123456789".utf8)
        case 7: head += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"  // no key
        default:
            head += "Content-Length: 2\r\n"
            body = Array("{}".utf8)
        }
        return Array((head + "\r\n").utf8) + body
    }

    /// Sockets that send half a request, a byte at a time, and never finish (slowloris).
    static func slowloris(port: Int, count: Int) -> [Int32] {
        (0..<count).compactMap { _ in
            guard let fd = connectLoopback(port: port) else { return nil }
            _ = "GET / HTTP/1.1\r\nHost: 127".withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            return fd
        }
    }
}
