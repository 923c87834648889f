import RelayCore
import RelayTesting
import RelayTransport
import Testing

/// Echoes text frames, closes on "bye", answers `GET /ping` and `POST /echo`.
private final class EchoHandler: ListenerHandler {
    var opened = 0
    var closed = 0

    func handleHTTP(_ exchange: HTTPExchange) {
        switch (exchange.method, exchange.path) {
        case ("GET", "/ping"): exchange.respond(.json(200, #"{"pong":true}"#))
        case ("POST", "/echo"):
            exchange.receiveBody(limit: 16, into: .memory) { result in
                switch result {
                case .success(.bytes(let bytes)): exchange.respond(HTTPResponse(status: 200, body: .bytes(bytes)))
                case .failure(.tooLarge): exchange.respond(.json(413, "{}"))
                default: exchange.respond(.json(500, "{}"))
                }
            }
        default: exchange.respond(.json(404, "{}"))
        }
    }

    func webSocketOpened(_ connection: WebSocketConnection) { opened += 1 }

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard case .text(let text) = message else { return connection.close(code: 1003, reason: "text only") }
        if text == "bye" { return connection.close(code: 1000, reason: "bye") }
        connection.send(text: text)
    }

    func webSocketClosed(_ connection: WebSocketConnection) { closed += 1 }
}

@Suite struct MemoryTransportTests {
    private func harness(_ handler: EchoHandler, maxBufferedBytes: Int = 64 << 20) -> ListenerHarness {
        var config = ListenerConfig(name: "echo", host: "127.0.0.1", port: 0, webSocketPaths: ["/ws"])
        config.maxBufferedBytes = maxBufferedBytes
        return ListenerHarness(handler: handler, config: config, loop: ManualLoop())
    }

    @Test func framesGoBothWaysAndACloseFrameEndsTheSocket() {
        let handler = EchoHandler()
        let harness = harness(handler)
        let socket = harness.connect()
        #expect(handler.opened == 1)
        socket.send("hello")
        #expect(socket.read() == [.text("hello")])
        socket.send("bye")
        #expect(socket.read() == [.close(code: 1000, reason: "bye")])
        #expect(socket.isClosed && handler.closed == 1)
        socket.send("ignored after the close")
        #expect(socket.read().isEmpty)
    }

    @Test func aClientThatLeavesIsClosedOnce() {
        let handler = EchoHandler()
        let socket = harness(handler).connect()
        socket.close()
        socket.close()
        #expect(handler.closed == 1)
    }

    @Test func aReaderThatHoldsTooMuchIsShedAsASlowConsumer() {
        let handler = EchoHandler()
        let socket = harness(handler, maxBufferedBytes: 10).connect()
        socket.connection.send(text: "0123456789")
        socket.connection.send(text: "more")
        #expect(socket.read() == [.close(code: 1008, reason: "slow consumer")])
        #expect(handler.closed == 1)
    }

    @Test func requestsAreAnsweredWithTheirBodies() throws {
        let harness = harness(EchoHandler())
        #expect(try #require(harness.request("GET", "/ping")).json?["pong"]?.boolValue == true)
        #expect(try #require(harness.request("POST", "/echo", body: Array("abc".utf8))).text == "abc")
        #expect(try #require(harness.request("POST", "/echo", body: Array(repeating: 65, count: 17))).status == 413)
        #expect(try #require(harness.request("GET", "/nowhere")).status == 404)
    }
}
