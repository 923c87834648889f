import DiscoClawWire
import RelayCore

/// The protocol of one DiscoClaw upstream account's link, as a pure state machine: register once
/// (with a setup token), open the receive-only WebSocket, catch up with `/sync` before calling the
/// link connected. Connecting, pings, backoff and reports are its `LinkLifecycle`'s;
/// `DiscoClawLink` runs it.
///
/// A refused token (401 at the WebSocket upgrade or on a REST call) is `bad_credentials` and is
/// retried only at the longest backoff: no hot loop against a server that will not have us.
struct DiscoClawLinkMachine: LinkMachine {
    /// Where one socket stands.
    enum Session: Equatable, Sendable {
        /// The `/sync` that recovers missed answers has not come back yet.
        case catchingUp
        case ready
    }

    enum Own: Equatable, Sendable {
        /// `POST /auth/register` with the setup token; then `registered` or `registrationFailed`.
        case register
        /// A socket opened: `GET /sync` for the answers still awaited; then `caughtUp` or `catchUpFailed`.
        case catchUp
        case event(DiscoClawEvent)
        /// A ping interval passed with a socket open (turns expire on it).
        case tick(Int64)
    }

    private(set) var lifecycle: LinkLifecycle<Session>
    /// A device token is known (configured, stored, or just registered).
    private(set) var hasToken: Bool

    /// `endpoint` is `host:port`, for details; never a URL with a token. A server that answers no
    /// ping for two intervals is left.
    init(endpoint: String, hasToken: Bool, pingIntervalMillis: Int = 15_000, random: @escaping (Int) -> Int = Backoff.systemRandom) {
        self.hasToken = hasToken
        let timing = LinkTiming(tickMillis: pingIntervalMillis, watchdog: .silence(millis: 2 * pingIntervalMillis), silenceCloseReason: "no pong")
        lifecycle = LinkLifecycle(endpoint: endpoint, timing: timing, random: random)
    }

    var endpoint: String { lifecycle.endpoint }
    var phase: LinkLifecycle<Session>.Phase { lifecycle.phase }
    var state: LinkState { lifecycle.state }
    var isReady: Bool { lifecycle.isEstablished }
    /// A socket is open (catching up or ready).
    var isOpen: Bool { lifecycle.isOpen }
    /// This try registers first: no socket was asked for yet.
    private var isRegistering: Bool { lifecycle.phase == .connecting && !hasToken }

    mutating func connect() -> [Action] {
        guard hasToken else { return lifecycle.connect(reporting: "registering with \(endpoint)", first: .own(.register)) }
        return lifecycle.connect(reporting: "connecting to \(endpoint)")
    }

    mutating func registered() -> [Action] {
        guard isRegistering else { return [] }
        hasToken = true
        return lifecycle.report(.connecting, "registered; connecting to \(endpoint)") + [.connect]
    }

    /// `refused`: the server turned the setup token down (401/403); anything else is retried sooner.
    mutating func registrationFailed(_ reason: String, refused: Bool) -> [Action] {
        guard isRegistering else { return [] }
        return lifecycle.retry(LinkClosing(reason, state: refused ? .badCredentials : .retrying, saturatesBackoff: refused))
    }

    /// The WebSocket opened: catch up before calling the link connected.
    mutating func opened(now: Int64) -> [Action] {
        lifecycle.opened(now: now, session: .catchingUp, awaiting: nil, first: [.own(.catchUp)])
    }

    /// Events count from the socket's opening, during the catch-up too.
    mutating func received(_ bytes: [UInt8], now: Int64) -> [Action] {
        lifecycle.heard(now: now)
        guard lifecycle.isOpen, let event = DiscoClawEvent.decode(bytes) else { return [] }
        return [.own(.event(event))]
    }

    mutating func caughtUp() -> [Action] {
        guard lifecycle.session == .catchingUp else { return [] }
        return lifecycle.establish(.ready, detail: endpoint)
    }

    /// The catch-up `/sync` failed: drop the socket and start over (missed answers are still missed).
    mutating func catchUpFailed(_ reason: String) -> [Action] {
        guard lifecycle.session == .catchingUp else { return [] }
        return lifecycle.close(LinkClosing(reason), reason: "sync failed")
    }

    /// A REST call was answered 401: the token no longer works.
    mutating func tokenRefused() -> [Action] { lifecycle.close(refusedToken, code: 4001, reason: "token refused") }

    /// Every ping interval with a socket open: the turns' tick, then the watchdog.
    mutating func tick(now: Int64, silentMillis: Int) -> [Action] {
        guard lifecycle.isOpen else { return [] }
        return [.own(.tick(now))] + lifecycle.tick(now: now, silentMillis: silentMillis)
    }

    /// The socket closed, or never opened (`error`: libwebsockets' reason; a 401 at the upgrade
    /// reads "HS: ws upgrade unauthorized").
    mutating func closed(code: UInt16?, error: String?) -> [Action] {
        guard !isRegistering else { return [] }
        if error?.localizedCaseInsensitiveContains("unauthorized") == true { return lifecycle.retry(refusedToken) }
        return lifecycle.retry(lifecycle.closing ?? LinkClosing(error.map { "\(endpoint): \($0)" } ?? "\(endpoint) closed the connection"))
    }

    mutating func stop() -> [Action] { lifecycle.stop(nil) }

    private var refusedToken: LinkClosing {
        LinkClosing("the token was refused by \(endpoint) (401)", state: .badCredentials, saturatesBackoff: true)
    }
}
