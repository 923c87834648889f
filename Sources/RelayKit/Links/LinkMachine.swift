/// One upstream link's protocol as a pure state machine: every input returns the actions to
/// perform, and `LinkDriver` (RelayTransport) performs them with a client socket and the loop's
/// timers. A protocol's machine composes `LinkLifecycle` for connect, backoff, watchdog and
/// reports, and adds its handshake; inputs of its own (a registration's outcome, a request) are
/// fed through the driver's `apply`.
///
/// Time comes in as arguments and randomness is injected, so a test drives a machine alone.
public protocol LinkMachine {
    /// The protocol's own actions (`LinkAction.own`).
    associatedtype Own: Equatable
    typealias Action = LinkAction<Own>

    var state: LinkState { get }
    /// The handshake is done: turns may use the link.
    var isReady: Bool { get }

    /// Start a try (the first, or when a retry timer fires).
    mutating func connect() -> [Action]
    /// The socket asked for by `connect` is open.
    mutating func opened(now: Int64) -> [Action]
    /// A frame arrived on the open socket (text or binary, as bytes).
    mutating func received(_ frame: [UInt8], now: Int64) -> [Action]
    /// The tick armed by `armTick` fired; `silentMillis` is how long ago the peer last answered a
    /// ping (or the socket opened), on a monotonic clock.
    mutating func tick(now: Int64, silentMillis: Int) -> [Action]
    /// The socket closed (`code` as the peer sent it) or never opened (`error`).
    mutating func closed(code: UInt16?, error: String?) -> [Action]
    /// Lets the link go for good (a reload removed its account): closes an open socket, tries no
    /// more, reports nothing.
    mutating func stop() -> [Action]
}
