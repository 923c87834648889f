internal import CLibWebSockets
import Logging

/// What carries a connection's bytes: the libwebsockets loop in the relay, `MemoryTransport` in
/// tests. `WebSocketConnection` and `HTTPExchange` queue what handlers send and ask their carrier
/// to write it.
///
/// - Important: called on the loop thread.
protocol ConnectionIO: AnyObject {
    var logger: Logger { get }
    /// The connection queued a frame: write it once the socket can take it.
    func requestWrite(_ connection: WebSocketConnection)
    /// The connection is closing: drop it if its close frame is not out within `seconds`.
    func armCloseGrace(_ connection: WebSocketConnection, seconds: Int32)
    /// The exchange has its response: write it.
    func respond(_ exchange: HTTPExchange, with response: HTTPResponse)
}

extension ServiceLoop: ConnectionIO {
    func requestWrite(_ connection: WebSocketConnection) {
        if let wsi = connection.wsi { lws_callback_on_writable(wsi) }
    }

    func armCloseGrace(_ connection: WebSocketConnection, seconds: Int32) {
        guard let wsi = connection.wsi else { return }
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, seconds)
        // lws restarts its own timeout at each step of a close; this one ends it for good.
        schedule(afterMillis: Int(seconds) * 1_000) { [weak self, weak connection] in
            guard let self, let connection, !connection.isClosed, let wsi = connection.wsi else { return }
            logger.info(
                "dropping a socket that did not close within its grace",
                metadata: ["listener": "\(connection.listener)", "conn": "\(connection.id)"]
            )
            lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC)
        }
    }

    func respond(_ exchange: HTTPExchange, with response: HTTPResponse) {
        observeHTTPResponse(exchange, response)
        if let wsi = exchange.wsi { lws_callback_on_writable(wsi) }
    }
}
