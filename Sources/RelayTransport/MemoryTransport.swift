import Logging

/// A frame a connection wrote, as its peer reads it.
public enum WrittenFrame: Equatable, Sendable {
    case text(String)
    case binary([UInt8])
    case ping
    case close(code: UInt16, reason: String)
}

/// Connections and HTTP exchanges with no socket under them, for tests: what a handler sends is
/// kept until the test takes it (`written(_:)`), as if a peer read it.
///
/// Tests drive the handler themselves (`RelayTesting`'s listener harness does): this type only
/// stands where libwebsockets would. Not thread-safe: one test's loop thread.
@_spi(Testing) public final class MemoryTransport: ConnectionIO {
    public let logger: Logger
    private var nextID: UInt64 = 1

    public init(logger: Logger = Logger(label: "memory-transport")) { self.logger = logger }

    private func newID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// A server-side WebSocket on `listener`, as if a client had just upgraded (the handler is not told).
    public func openWebSocket(
        listener: String,
        path: String = "/",
        peerAddress: String = "127.0.0.1",
        headers: RequestHeaders = RequestHeaders(),
        maxMessageBytes: Int = 1 << 20,
        maxBufferedBytes: Int = 64 << 20
    ) -> WebSocketConnection {
        let connection = WebSocketConnection(
            id: newID(),
            wsi: nil,
            listener: listener,
            path: path,
            peerAddress: peerAddress,
            io: self,
            maxMessageBytes: maxMessageBytes
        )
        connection.maxBufferedBytes = maxBufferedBytes
        connection.headers = headers
        return connection
    }

    /// A client WebSocket this process opened to `peerAddress` (the handler is not told).
    public func openClient(peerAddress: String, path: String = "/", maxMessageBytes: Int = 16 << 20, handler: ClientHandler) -> WebSocketConnection {
        WebSocketConnection(
            id: newID(),
            wsi: nil,
            listener: ServiceLoop.clientVhostName,
            path: path,
            peerAddress: peerAddress,
            io: self,
            maxMessageBytes: maxMessageBytes,
            clientHandler: handler
        )
    }

    /// Takes what the connection queued, in order, as a peer that reads everything would: each
    /// frame's write callback runs. After a close frame nothing more is taken and the connection
    /// counts as closed (the caller tells the handler, as libwebsockets would).
    public func written(_ connection: WebSocketConnection) -> [WrittenFrame] {
        var frames: [WrittenFrame] = []
        while let frame = connection.popOutbound() {
            switch frame {
            case .text(let bytes, let onWritten):
                frames.append(.text(String(decoding: bytes, as: UTF8.self)))
                onWritten?()
            case .binary(let bytes): frames.append(.binary(bytes))
            case .ping: frames.append(.ping)
            case .close(let code, let reason):
                frames.append(.close(code: code, reason: reason))
                connection.isClosed = true
                return frames
            }
        }
        return frames
    }

    /// The connection ended from the peer's side (or was dropped): it counts as closed.
    public func markClosed(_ connection: WebSocketConnection, peerCode: UInt16? = nil) {
        connection.peerCloseCode = peerCode
        connection.isClosed = true
    }

    /// An HTTP request on `listener`, as libwebsockets would hand it over (the handler is not told).
    public func exchange(
        listener: String,
        method: String,
        path: String,
        headers: RequestHeaders = RequestHeaders(),
        contentType: String? = nil,
        contentLength: Int? = nil,
        isWebSocketUpgradePath: Bool = false
    ) -> HTTPExchange {
        let exchange = HTTPExchange(
            connectionID: newID(),
            wsi: nil,
            listener: listener,
            method: method,
            path: path,
            query: headers.query,
            authorization: headers.authorization,
            contentType: contentType,
            contentLength: contentLength,
            isWebSocketUpgradePath: isWebSocketUpgradePath,
            io: self
        )
        exchange.headers = headers
        return exchange
    }

    /// Hands the request body to a handler that asked for it (`receiveBody`), all at once.
    public func deliverBody(_ body: [UInt8], to exchange: HTTPExchange) {
        guard exchange.isReadingBody else { return }
        body.withUnsafeBytes { exchange.appendBody($0) }
        exchange.completeBody()
    }

    /// The response the handler gave, if it answered; its `done` callback runs on the first read.
    public func response(of exchange: HTTPExchange) -> HTTPResponse? {
        guard let response = exchange.response else { return nil }
        exchange.finished()
        return response
    }

    // MARK: ConnectionIO

    func requestWrite(_ connection: WebSocketConnection) {}

    func armCloseGrace(_ connection: WebSocketConnection, seconds: Int32) {}

    func respond(_ exchange: HTTPExchange, with response: HTTPResponse) {}
}
