import Logging
import RelayCore
@_spi(Testing) import RelayTransport

/// Drives a bridge's listener with no socket under it: connections and requests are made in
/// memory, what the handler sends is read back as a client would read it, and the manual loop
/// runs after every step so the core's completions (the memory journals') arrive as they would.
///
/// - Important: one test's thread; the loop is the test's `ManualLoop`.
public final class ListenerHarness {
    public let handler: ListenerHandler
    public let config: ListenerConfig
    public let loop: ManualLoop
    let transport: MemoryTransport

    public init(handler: ListenerHandler, config: ListenerConfig, loop: ManualLoop, logger: Logger = Logger(label: "harness")) {
        self.handler = handler
        self.config = config
        self.loop = loop
        transport = MemoryTransport(logger: logger)
    }

    /// A client connects on `path` (refused like libwebsockets would when the handler refuses the upgrade).
    public func connect(path: String? = nil, headers: RequestHeaders = RequestHeaders(), peerAddress: String = "127.0.0.1") -> TestSocket {
        let connection = transport.openWebSocket(
            listener: config.name,
            path: path ?? config.webSocketPaths.sorted().first ?? "/",
            peerAddress: peerAddress,
            headers: headers,
            maxMessageBytes: config.maxMessageBytes,
            maxBufferedBytes: config.maxBufferedBytes
        )
        let socket = TestSocket(connection: connection, harness: self)
        handler.webSocketOpened(connection)
        loop.runUntilIdle()
        return socket
    }

    /// The answer a WebSocket upgrade with these headers gets before any socket exists; nil = upgraded.
    public func refusal(ofWebSocket headers: RequestHeaders) -> HTTPResponse? { handler.refusal(ofWebSocket: headers) }

    /// An HTTP request; the response once the handler answered (after the loop ran), nil if it has not.
    public func request(
        _ method: String,
        _ path: String,
        headers: RequestHeaders = RequestHeaders(),
        body: [UInt8]? = nil,
        contentType: String? = "application/json"
    ) -> TestResponse? {
        let exchange = transport.exchange(
            listener: config.name,
            method: method,
            path: path,
            headers: headers,
            contentType: body == nil ? nil : contentType,
            contentLength: body?.count,
            isWebSocketUpgradePath: config.webSocketPaths.contains(path)
        )
        handler.handleHTTP(exchange)
        loop.runUntilIdle()
        if let body {
            transport.deliverBody(body, to: exchange)
            loop.runUntilIdle()
        }
        return transport.response(of: exchange).map(TestResponse.init)
    }

    /// `request` with a JSON body.
    public func request(_ method: String, _ path: String, headers: RequestHeaders = RequestHeaders(), json: JSONValue) -> TestResponse? {
        request(method, path, headers: headers, body: Array(json.encoded().utf8))
    }

    /// The loop's clock moves on; due timers fire.
    public func advance(millis: Int64) { loop.advance(millis: millis) }

    fileprivate func closed(_ socket: TestSocket) {
        handler.webSocketClosed(socket.connection)
        loop.runUntilIdle()
    }
}

/// One client socket of a `ListenerHarness`.
public final class TestSocket {
    public let connection: WebSocketConnection
    private let harness: ListenerHarness
    private var told = false
    /// Every frame read so far, in order.
    public private(set) var frames: [WrittenFrame] = []
    private var readCount = 0

    fileprivate init(connection: WebSocketConnection, harness: ListenerHarness) {
        self.connection = connection
        self.harness = harness
    }

    /// The client sends a text frame (ignored once the socket is closed, as the transport would).
    public func send(_ text: String) {
        guard !connection.isClosed, !connection.isClosing else { return }
        harness.handler.webSocket(connection, received: .text(text))
        harness.loop.runUntilIdle()
        pump()
    }

    /// The client sends a JSON object as a text frame.
    public func send(json: JSONValue) { send(json.encoded()) }

    public func send(binary: [UInt8]) {
        guard !connection.isClosed, !connection.isClosing else { return }
        harness.handler.webSocket(connection, received: .binary(binary))
        harness.loop.runUntilIdle()
        pump()
    }

    /// Frames written since the last call, in order. A close frame ends the socket (the handler
    /// hears `webSocketClosed`, as after libwebsockets sent it).
    public func read() -> [WrittenFrame] {
        pump()
        let fresh = Array(frames[readCount...])
        readCount = frames.count
        return fresh
    }

    /// The text frames since the last read, parsed as JSON (a frame that is not JSON fails the test's `#require`).
    public func readJSON() -> [JSONValue] {
        read().compactMap { frame in if case .text(let text) = frame { JSONValue.parse(Array(text.utf8)) } else { nil } }
    }

    /// The close frame the relay sent, if it closed the socket.
    public var closeFrame: (code: UInt16, reason: String)? {
        pump()
        for frame in frames { if case .close(let code, let reason) = frame { return (code, reason) } }
        return nil
    }

    public var isClosed: Bool {
        pump()
        return connection.isClosed
    }

    /// The client goes away (a close from its side, or a dropped connection).
    public func close(code: UInt16? = 1000) {
        guard !told else { return }
        harness.transport.markClosed(connection, peerCode: code)
        told = true
        harness.closed(self)
    }

    private func pump() {
        frames += harness.transport.written(connection)
        if connection.isClosed, !told {
            told = true
            harness.closed(self)
            frames += harness.transport.written(connection)
        }
    }
}

/// An HTTP response as a client reads it.
public struct TestResponse {
    public let response: HTTPResponse

    init(_ response: HTTPResponse) { self.response = response }

    public var status: Int { response.status }

    public var headers: [(String, String)] { response.headers }

    public var body: [UInt8] {
        if case .bytes(let bytes) = response.body { return bytes }
        return []
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    public var json: JSONValue? { JSONValue.parse(body) }
}
