/// How a link watches its socket: the tick (a ping each), when silence means a dead socket, and
/// how long a handshake may take.
public struct LinkTiming: Sendable, Equatable {
    /// When the watchdog gives up on a socket.
    public enum Watchdog: Sendable, Equatable {
        /// Nothing heard (no frame, no pong) for this long.
        case silence(millis: Int)
        /// No frame in this many tick intervals in a row (for a protocol that pings with frames).
        case silentTicks(Int)
    }

    public var tickMillis: Int
    public var watchdog: Watchdog
    /// From the socket's opening to the end of a handshake that waits for something.
    public var handshakeTimeoutMillis: Int
    /// The close frame's reason when the handshake took too long.
    public var handshakeCloseReason: String
    /// The close frame's reason when the watchdog found the socket silent.
    public var silenceCloseReason: String

    public init(
        tickMillis: Int = 15_000,
        watchdog: Watchdog = .silence(millis: 45_000),
        handshakeTimeoutMillis: Int = 15_000,
        handshakeCloseReason: String = "",
        silenceCloseReason: String = ""
    ) {
        self.tickMillis = tickMillis
        self.watchdog = watchdog
        self.handshakeTimeoutMillis = handshakeTimeoutMillis
        self.handshakeCloseReason = handshakeCloseReason
        self.silenceCloseReason = silenceCloseReason
    }
}

/// Why a try ends: what the report says and how long the retry waits.
public struct LinkClosing: Sendable, Equatable {
    /// The report's detail before `; next try in …`; nil when the state was reported already.
    public var reason: String?
    public var state: LinkState
    /// A fixed wait instead of the backoff's next delay.
    public var retryAfterMillis: Int?
    /// A refusal that will not heal soon: the backoff jumps to its longest step.
    public var saturatesBackoff: Bool

    public init(_ reason: String?, state: LinkState = .retrying, retryAfterMillis: Int? = nil, saturatesBackoff: Bool = false) {
        self.reason = reason
        self.state = state
        self.retryAfterMillis = retryAfterMillis
        self.saturatesBackoff = saturatesBackoff
    }
}
