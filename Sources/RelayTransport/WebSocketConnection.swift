import Logging

/// A server-side WebSocket, owned by the service thread.
///
/// Bridges queue frames with `send` and end it with `close`; the loop writes them in order
/// (`ServiceLoop+Write`).
public final class WebSocketConnection {
    enum Outbound {
        case text([UInt8], onWritten: (() -> Void)?)
        case binary([UInt8])
        case ping
        case close(code: UInt16, reason: String)

        /// The payload of a text or binary frame; nil for a control frame.
        var data: (bytes: [UInt8], isText: Bool, onWritten: (() -> Void)?)? {
            switch self {
            case .text(let bytes, let onWritten): (bytes, true, onWritten)
            case .binary(let bytes): (bytes, false, nil)
            case .ping, .close: nil
            }
        }
    }

    public let id: UInt64
    public let listener: String
    public let path: String
    public let peerAddress: String
    /// The upgrade request's query and headers (server sockets).
    public internal(set) var headers = RequestHeaders()
    /// Set by the bridge once it knows who is on the other end; copied into audit records.
    public var deviceID: String?
    public var userID: String?
    /// Free slot for the bridge's per-socket state.
    public var context: AnyObject?

    /// The libwebsockets handle; nil for a connection in memory.
    let wsi: OpaquePointer?
    unowned let io: any ConnectionIO
    /// Set for connections this process opened; their events go here instead of a listener.
    weak var clientHandler: ClientHandler?
    /// The largest message its listener (or client target) takes.
    public let listenerMaxMessageBytes: Int
    /// The largest message taken now: a handler may lower it (before authentication) and raise it
    /// back to `listenerMaxMessageBytes`. A message whose frame header already declares more is
    /// refused with 1009 before any of it is buffered.
    public var maxMessageBytes: Int
    /// Unsent bytes this socket may hold (its listener's `maxBufferedBytes`).
    var maxBufferedBytes = Int.max
    var outbound: [Outbound] = []
    var outboundHead = 0
    public private(set) var bufferedBytes = 0
    var fragments: [UInt8] = []
    var fragmentsAreBinary = false
    var lastPongMicros: UInt64
    public private(set) var isClosing = false
    public internal(set) var isClosed = false
    /// The close code the peer sent, if it sent one.
    public internal(set) var peerCloseCode: UInt16?

    init(
        id: UInt64,
        wsi: OpaquePointer?,
        listener: String,
        path: String,
        peerAddress: String,
        io: any ConnectionIO,
        maxMessageBytes: Int,
        clientHandler: ClientHandler? = nil
    ) {
        self.id = id
        self.maxMessageBytes = maxMessageBytes
        self.listenerMaxMessageBytes = maxMessageBytes
        self.clientHandler = clientHandler
        self.wsi = wsi
        self.listener = listener
        self.path = path
        self.peerAddress = peerAddress
        self.io = io
        self.lastPongMicros = monotonicMicros()
    }

    /// True for a connection this process opened as a client.
    public var isClient: Bool { listener == ServiceLoop.clientVhostName }

    /// Queues a text frame.
    public func send(text: String) {
        enqueue(.text(Array(text.utf8), onWritten: nil))
    }

    /// Queues a text frame and calls `onWritten` once the socket took it (not if the socket closes first).
    public func send(text: String, onWritten: @escaping () -> Void) {
        enqueue(.text(Array(text.utf8), onWritten: onWritten))
    }

    /// Queues a text frame from UTF-8 bytes.
    public func send(utf8 bytes: [UInt8]) {
        enqueue(.text(bytes, onWritten: nil))
    }

    /// Queues a text frame from UTF-8 bytes and calls `onWritten` once the socket took it.
    public func send(utf8 bytes: [UInt8], onWritten: @escaping () -> Void) {
        enqueue(.text(bytes, onWritten: onWritten))
    }

    public func send(binary bytes: [UInt8]) {
        enqueue(.binary(bytes))
    }

    /// Seconds a closing socket gets to write what is queued and its close frame; then the
    /// connection is dropped even if the peer reads nothing.
    static let closeGraceSeconds: Int32 = 5

    /// Sends a close frame after the frames already queued, then drops the socket.
    ///
    /// - Important: the socket is gone within `closeGraceSeconds` whatever the peer does: lws's
    ///   own close steps each restart a timeout of their own, so the grace has a timer here too.
    public func close(code: UInt16, reason: String = "") {
        guard !isClosing, !isClosed else { return }
        isClosing = true
        appendOutbound(.close(code: code, reason: String(reason.utf8.prefix(120)) ?? ""))
        io.armCloseGrace(self, seconds: Self.closeGraceSeconds)
    }

    /// Closes a socket whose peer is gone or reads nothing: what waits unsent is dropped (protocols
    /// replay or resend it on reconnect), so the close frame is the next thing written.
    func abandon(code: UInt16, reason: String) {
        guard !isClosing, !isClosed else { return }
        outbound.removeAll()
        outboundHead = 0
        bufferedBytes = 0
        close(code: code, reason: reason)
    }

    func sendPing() {
        enqueue(.ping)
    }

    /// Sends a ping from this side (a client watching its link; listeners ping on their own).
    public func ping() { sendPing() }

    /// Milliseconds since the peer last answered a ping, or since the socket opened.
    public var millisSinceLastPong: Int {
        let now = monotonicMicros()
        return now > lastPongMicros ? Int((now - lastPongMicros) / 1_000) : 0
    }

    private func enqueue(_ frame: Outbound) {
        guard !isClosing, !isClosed else { return }
        appendOutbound(frame)
    }

    private func appendOutbound(_ frame: Outbound) {
        bufferedBytes += frame.data?.bytes.count ?? 0
        outbound.append(frame)
        if outbound.count - outboundHead == 1 { io.requestWrite(self) }
        if bufferedBytes > maxBufferedBytes, !isClosing { shedSlowConsumer() }
    }

    /// The peer does not read: drop what waits (protocols replay or resend it on reconnect) and close.
    private func shedSlowConsumer() {
        io.logger.warning(
            "closing a slow consumer",
            metadata: ["listener": "\(listener)", "conn": "\(id)", "unsent": "\(bufferedBytes)"]
        )
        abandon(code: 1008, reason: "slow consumer")
    }

    func peekOutbound() -> Outbound? {
        outboundHead < outbound.count ? outbound[outboundHead] : nil
    }

    func popOutbound() -> Outbound? {
        guard outboundHead < outbound.count else { return nil }
        let frame = outbound[outboundHead]
        outboundHead += 1
        if outboundHead > 64, outboundHead * 2 > outbound.count {
            outbound.removeFirst(outboundHead)
            outboundHead = 0
        }
        bufferedBytes -= frame.data?.bytes.count ?? 0
        return frame
    }

    var hasOutbound: Bool { outboundHead < outbound.count }
}

extension WebSocketConnection {
    /// Logs a protocol error this socket caused: at info when the relay closes the socket for it
    /// (a lifecycle event an operator reads), at debug otherwise. Never a frame body.
    public func logFailure(
        _ logger: Logger?,
        protocol name: String,
        device: String,
        code: String,
        message: String,
        closingWith closeCode: UInt16?
    ) {
        guard let logger else { return }
        var metadata: Logger.Metadata = [
            "protocol": "\(name)", "conn": "\(id)", "remote": "\(peerAddress)", "code": "\(code)", "error": "\(message)",
        ]
        if !device.isEmpty { metadata["device"] = "\(device)" }
        if let closeCode {
            metadata["close"] = "\(closeCode)"
            logger.info("closing a \(name) socket", metadata: metadata)
        } else {
            logger.debug("protocol error", metadata: metadata)
        }
    }
}
