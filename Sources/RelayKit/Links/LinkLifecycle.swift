/// The part of every upstream link that is not its protocol, as a pure state machine: connect,
/// watch the open socket (a ping every tick; a handshake deadline; silence means a dead socket),
/// report the state with an operator-readable detail, back off with jitter and try again, or stop
/// on a refusal that will not heal. A protocol's machine keeps one and adds its handshake;
/// `Session` is that protocol's state on one open socket, kept inside the `open` phase.
///
/// Methods return `LinkAction`s for any protocol's action type; a method called in a phase where
/// it means nothing returns none.
public struct LinkLifecycle<Session: Equatable & Sendable> {
    public enum Phase: Equatable, Sendable {
        case idle
        /// The socket was asked for (or the protocol's step before it runs, like a registration).
        case connecting
        case open(Socket)
        case waitingToRetry
        /// Refused for good (or let go by the owner): nothing happens until the relay restarts.
        case stopped
    }

    /// An open socket: the protocol's session on it and what the watchdog knows of it.
    public struct Socket: Equatable, Sendable {
        public internal(set) var session: Session
        public let openedAt: Int64
        /// What the handshake waits for (`welcome`), under the handshake deadline; nil once
        /// established, or for a wait without a deadline (a pairing a person decides).
        public internal(set) var awaiting: String?
        public internal(set) var isEstablished = false
        /// Set when this side closes the socket: how the close will be reported.
        public internal(set) var closing: LinkClosing?
        var tickMillis: Int
        var watchdog: LinkTiming.Watchdog
        var lastHeardAt: Int64
        var heardSinceTick = false
        var silentTicks = 0
    }

    /// `host:port`, for details; never a URL (a path may carry a token).
    public let endpoint: String
    public let timing: LinkTiming
    public internal(set) var phase = Phase.idle
    public internal(set) var state = LinkState.connecting
    public internal(set) var backoff: Backoff
    /// Returns a number in `0...bound`; injected so tests are deterministic.
    let random: (Int) -> Int

    public init(
        endpoint: String,
        timing: LinkTiming = LinkTiming(),
        backoff: Backoff = Backoff(),
        random: @escaping (Int) -> Int = Backoff.systemRandom
    ) {
        self.endpoint = endpoint
        self.timing = timing
        self.backoff = backoff
        self.random = random
    }

    public var socket: Socket? { if case .open(let socket) = phase { socket } else { nil } }
    public var session: Session? { socket?.session }
    public var isOpen: Bool { socket != nil }
    public var isEstablished: Bool { socket?.isEstablished == true }
    public var isStopped: Bool { phase == .stopped }

    /// Starts a try from idle or waiting: reports `connecting` with `detail`, then asks for `first`
    /// (the socket, or the protocol's step before it). Awaiting approval and bad credentials stay
    /// shown while the link retries: the operator has to act on them.
    public mutating func connect<Own>(reporting detail: String, first: LinkAction<Own> = .connect) -> [LinkAction<Own>] {
        guard phase == .idle || phase == .waitingToRetry else { return [] }
        phase = .connecting
        let quiet = state == .awaitingApproval || state == .badCredentials
        return (quiet ? [] : report(.connecting, detail)) + [first]
    }

    /// The socket opened with `session` on it: `first` (the protocol's opening frames), then the
    /// tick starts. A handshake `awaiting` something must end within `timing.handshakeTimeoutMillis`.
    /// A socket that opens after `stop` is closed.
    public mutating func opened<Own>(now: Int64, session: Session, awaiting: String?, first: [LinkAction<Own>] = []) -> [LinkAction<Own>] {
        guard phase == .connecting else { return phase == .stopped ? [.close(code: 1000, reason: "")] : [] }
        let socket = Socket(
            session: session,
            openedAt: now,
            awaiting: awaiting,
            tickMillis: timing.tickMillis,
            watchdog: timing.watchdog,
            lastHeardAt: now
        )
        phase = .open(socket)
        return first + [.armTick(afterMillis: timing.tickMillis)]
    }

    /// A frame arrived: the socket lives.
    public mutating func heard(now: Int64) {
        modifySocket {
            $0.lastHeardAt = now
            $0.heardSinceTick = true
        }
    }

    /// The protocol's session on the open socket moved on.
    public mutating func update(_ session: Session) { modifySocket { $0.session = session } }

    /// The handshake is done: the backoff starts over and the link is `connected`. A protocol that
    /// learns its tick during the handshake (a gateway's policy) passes it and its watchdog.
    public mutating func establish<Own>(
        _ session: Session,
        detail: String,
        tickMillis: Int? = nil,
        watchdog: LinkTiming.Watchdog? = nil
    ) -> [LinkAction<Own>] {
        guard isOpen else { return [] }
        modifySocket {
            $0.session = session
            $0.isEstablished = true
            $0.awaiting = nil
            $0.tickMillis = tickMillis ?? $0.tickMillis
            $0.watchdog = watchdog ?? $0.watchdog
        }
        backoff.reset()
        return report(.connected, detail) + (tickMillis.map { [.armTick(afterMillis: $0)] } ?? [])
    }

    public mutating func report<Own>(_ newState: LinkState, _ detail: String) -> [LinkAction<Own>] {
        state = newState
        return [.report(newState, detail)]
    }

    /// The next retry starts from the shortest step (the link worked, or the protocol changed
    /// something worth trying at once).
    public mutating func resetBackoff() { backoff.reset() }

    mutating func modifySocket(_ change: (inout Socket) -> Void) {
        guard case .open(var socket) = phase else { return }
        change(&socket)
        phase = .open(socket)
    }
}
