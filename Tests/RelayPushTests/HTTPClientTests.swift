import Foundation
import Logging
import RelayPush
import Synchronization
import Testing

typealias Outcome = Result<HTTPResponse, HTTPFailure>

/// `HTTPClient` against a real Python server on loopback; one server per test, killed in `deinit`.
@Suite final class HTTPClientTests {
    private let server: PythonHTTPServer
    private let logger = Logger(label: "push-test")

    init() async throws { server = try await PythonHTTPServer.start() }
    deinit { server.stop() }

    @Test func aPostArrivesIntactAndTheResponseComesBack() async throws {
        let client = HTTPClient(logger: logger)
        defer { client.shutdown() }
        let body: [UInt8] = [0, 1, 2, 0xFF] + Array("{\"aps\":{}} é".utf8)
        let headers: [(name: String, value: String)] = [("apns-topic", "com.example.app"), ("Content-Type", "application/json"), ("X-Empty", "")]
        let response = try await send(HTTPRequest(url: server.url("/echo"), headers: headers, body: body), with: client).get()
        #expect(response.status == 200)
        #expect(response.httpVersion == 1, "plain http is HTTP/1.1")
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["x-dup"] == "second", "a repeated header: the last wins")
        let echo = try Echo(response)
        #expect(echo.method == "POST")
        #expect(echo.body == body, "binary, zero bytes included")
        #expect(echo.header("apns-topic") == "com.example.app")
        #expect(echo.header("content-type") == "application/json")
        #expect(echo.header("x-empty") == "")
        #expect(echo.header("expect") == nil)
        #expect(echo.header("user-agent")?.hasPrefix("clawrelay/") == true)
    }

    @Test func otherMethodsAreSentAsGiven() async throws {
        let client = HTTPClient(logger: logger)
        defer { client.shutdown() }
        let get = try Echo(try await send(HTTPRequest(url: server.url("/echo"), method: "GET"), with: client).get())
        #expect(get.method == "GET" && get.body.isEmpty && get.header("content-type") == nil)
        let put = try Echo(try await send(HTTPRequest(url: server.url("/echo"), method: "PUT", body: [1, 2, 3]), with: client).get())
        #expect(put.method == "PUT" && put.body == [1, 2, 3])
        let delete = try Echo(try await send(HTTPRequest(url: server.url("/echo"), method: "DELETE"), with: client).get())
        #expect(delete.method == "DELETE" && delete.body.isEmpty)
        let empty = try Echo(try await send(HTTPRequest(url: server.url("/echo")), with: client).get())
        #expect(empty.method == "POST" && empty.header("content-length") == "0")
    }

    @Test func anErrorStatusIsAResponseNotAFailure() async throws {
        let client = HTTPClient(logger: logger)
        defer { client.shutdown() }
        for status in [404, 429, 500] {
            let response = try await send(HTTPRequest(url: server.url("/status/\(status)")), with: client).get()
            #expect(response.status == status)
            #expect(response.body == Array("status \(status)".utf8))
        }
    }

    @Test func aRefusedConnectionFailsWithLibcurlsMessage() async throws {
        let (socket, port) = try refusingPort()
        defer { close(socket) }
        let client = HTTPClient(logger: logger)
        defer { client.shutdown() }
        let outcome = try await send(HTTPRequest(url: "http://127.0.0.1:\(port)/push"), with: client)
        let message = try #require(transportMessage(outcome))
        #expect(message.contains("127.0.0.1 port \(port)"), "\(message)")
    }

    @Test func aServerSlowerThanTheTimeoutFails() async throws {
        let client = HTTPClient(logger: logger)
        defer { client.shutdown() }
        let outcome = try await send(HTTPRequest(url: server.url("/slow/5000"), timeoutMillis: 300), with: client)
        let message = try #require(transportMessage(outcome))
        #expect(message.contains("timed out"), "the client gave up, not the server answering: \(message)")
    }

    @Test func fiftyConcurrentSendsFromSeveralThreadsEachCompleteOnce() async throws {
        let client = HTTPClient(logger: logger)
        let done = Completions<(Int, Outcome)>()
        let url = server.url("/echo")
        for thread in 0..<5 {
            Thread {
                for index in thread * 10..<thread * 10 + 10 {
                    client.send(HTTPRequest(url: url, body: Array("\(index)".utf8))) { done.record((index, $0)) }
                }
            }.start()
        }
        let results = try await done.next(50)
        #expect(Set(results.map(\.0)) == Set(0..<50))
        var peers = Set<Int>()
        for (index, outcome) in results {
            let echo = try Echo(try outcome.get())
            #expect(echo.body == Array("\(index)".utf8))
            peers.insert(echo.peerPort)
        }
        #expect(peers.count <= 2, "at most two connections to one host, reused")
        client.shutdown()
        #expect(await done.rest().isEmpty, "no completion ran twice")
    }

    @Test func sequentialSendsReuseOneConnection() async throws {
        let client = HTTPClient(logger: logger)
        defer { client.shutdown() }
        var peers = Set<Int>()
        for _ in 0..<5 { peers.insert(try Echo(try await send(HTTPRequest(url: server.url("/echo")), with: client).get()).peerPort) }
        #expect(peers.count == 1)
    }

    @Test func aBodyOver64KiBIsCapped() async throws {
        let client = HTTPClient(logger: logger)
        defer { client.shutdown() }
        let response = try await send(HTTPRequest(url: server.url("/big/200000"), method: "GET"), with: client).get()
        #expect(response.status == 200)
        #expect(response.body.count == HTTPResponse.maxBodyBytes && HTTPResponse.maxBodyBytes == 65_536)
        #expect(response.body.allSatisfy { $0 == UInt8(ascii: "x") })
        #expect(response.isTruncated)
    }

    @Test func aRequestSetsItsOwnCapAndLearnsOfTheCut() async throws {
        let client = HTTPClient(logger: logger)
        defer { client.shutdown() }
        let whole = try await send(HTTPRequest(url: server.url("/big/200000"), method: "GET", maxResponseBytes: 200_000), with: client).get()
        #expect(whole.body.count == 200_000 && !whole.isTruncated)
        let cut = try await send(HTTPRequest(url: server.url("/big/200000"), method: "GET", maxResponseBytes: 1_000), with: client).get()
        #expect(cut.body.count == 1_000 && cut.isTruncated)
    }

    @Test func shutdownFailsEachRequestInFlightOnce() async throws {
        let client = HTTPClient(logger: logger)
        let done = Completions<Outcome>()
        for _ in 0..<3 { client.send(HTTPRequest(url: server.url("/slow/30000"), timeoutMillis: 60_000)) { done.record($0) } }
        // Two connections per host: two requests reach the server, the third waits in libcurl.
        _ = try await server.nextHits(2)
        client.shutdown()
        let outcomes = try await done.next(3)
        #expect(outcomes.allSatisfy { transportMessage($0)?.contains("shutting down") == true })
        #expect(await done.rest().isEmpty, "no completion ran twice")
        let late = Mutex<Outcome?>(nil)
        client.send(HTTPRequest(url: server.url("/echo"))) { outcome in late.withLock { $0 = outcome } }
        #expect(transportMessage(try #require(late.withLock { $0 }, "refused before send returns"))?.contains("shutting down") == true)
        client.shutdown()
    }

    @Test func releasingTheClientStopsItsThreadAndFailsWhatWasInFlight() async throws {
        let done = Completions<Outcome>()
        do {
            let client = HTTPClient(logger: logger)
            client.send(HTTPRequest(url: server.url("/slow/30000"), timeoutMillis: 60_000)) { done.record($0) }
            _ = try await server.nextHits(1)
            client.send(HTTPRequest(url: server.url("/slow/30000"), timeoutMillis: 60_000)) { done.record($0) }
        }
        let outcomes = try await done.next(2)
        #expect(outcomes.allSatisfy { transportMessage($0)?.contains("shutting down") == true })
    }

    @Test func tooManyOutstandingRequestsFailAtOnce() async throws {
        let client = HTTPClient(maxOutstanding: 2, logger: logger)
        let done = Completions<Outcome>()
        for _ in 0..<2 { client.send(HTTPRequest(url: server.url("/slow/30000"), timeoutMillis: 60_000)) { done.record($0) } }
        let third = Mutex<Outcome?>(nil)
        client.send(HTTPRequest(url: server.url("/echo"))) { outcome in third.withLock { $0 = outcome } }
        let refused = try #require(third.withLock { $0 }, "refused before send returns")
        #expect(transportMessage(refused)?.contains("2 push requests already outstanding") == true)
        client.shutdown()
        #expect(try await done.next(2).allSatisfy { transportMessage($0)?.contains("shutting down") == true })
    }

    @Test func onlyHTTPAndHTTPSURLsAreFetched() async throws {
        let client = HTTPClient(logger: logger)
        defer { client.shutdown() }
        for url in ["file:///etc/passwd", "ftp://127.0.0.1:\(server.port)/", "gopher://127.0.0.1:\(server.port)/"] {
            let message = try #require(transportMessage(try await send(HTTPRequest(url: url, method: "GET"), with: client)))
            #expect(message.lowercased().contains("protocol"), "\(url): \(message)")
        }
    }

    @Test func aHeaderThatWouldSplitTheRequestIsRefusedUnsent() async throws {
        let client = HTTPClient(logger: logger)
        defer { client.shutdown() }
        let injected = HTTPRequest(url: server.url("/status/200"), headers: [("X-A", "1\r\nGET /status/201 HTTP/1.1")])
        guard case .failure(.invalidRequest(let message)) = try await send(injected, with: client) else {
            Issue.record("a CR LF in a header value was sent")
            return
        }
        #expect(message.contains("X-A"))
        guard case .failure(.invalidRequest) = try await send(HTTPRequest(url: server.url("/echo"), method: "GET /x"), with: client) else {
            Issue.record("a method with a space was sent")
            return
        }
        _ = try await send(HTTPRequest(url: server.url("/echo")), with: client)
        #expect(try await server.nextHits(1) == ["/echo"], "nothing reached the server before")
    }

    private func send(_ request: HTTPRequest, with client: HTTPClient) async throws -> Outcome {
        let done = Completions<Outcome>()
        client.send(request) { done.record($0) }
        return try await done.next(1)[0]
    }
}

/// What `/echo` saw.
struct Echo: Decodable {
    let method: String
    let headers: [[String]]
    let body: [UInt8]
    let peerPort: Int

    init(_ response: HTTPResponse) throws {
        #expect(response.status == 200)
        self = try JSONDecoder().decode(Echo.self, from: Data(response.body))
    }

    func header(_ name: String) -> String? { headers.last { $0.first?.lowercased() == name }?.last }
}

func transportMessage(_ outcome: Outcome) -> String? {
    guard case .failure(.transport(let message)) = outcome else { return nil }
    return message
}

/// A loopback port that refuses connections: bound, so no other test takes it, but not listening.
private func refusingPort() throws -> (socket: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(descriptor >= 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    try #require(bound)
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}
