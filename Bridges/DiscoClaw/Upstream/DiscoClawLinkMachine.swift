import RelayCore

/// The life of one DiscoClaw upstream account's link, as a pure state machine: register once
/// (with a setup token), open the receive-only WebSocket, catch up with `/sync`, ping a quiet
/// server, notice a dead or refusing one, back off, try again. `DiscoClawUpstreamLink` performs
/// its actions on the service loop.
///
/// A refused token (401 at the WebSocket upgrade or on a REST call) is `bad_credentials` and is
/// retried only at the longest backoff: no hot loop against a server that will not have us.
struct DiscoClawLinkMachine {
    enum Phase: Equatable, Sendable {
        case idle
        case registering
        case connecting
        /// The socket is open; the `/sync` that recovers missed answers has not come back yet.
        case catchingUp
        case ready
        case waitingToRetry
    }

    enum Action: Equatable, Sendable {
        /// `POST /auth/register` with the setup token; then `registered` or `registrationFailed`.
        case register
        /// Open the WebSocket; then `opened` or `closed`.
        case connect
        /// `GET /sync` for the answers still awaited; then `caughtUp` or `catchUpFailed`.
        case catchUp
        case ping
        case close(code: UInt16, reason: String)
        /// Run `tick` after this long (replaces the pending tick).
        case armTick(afterMillis: Int)
        case cancelTick
        /// Run `connect` after this long.
        case armRetry(afterMillis: Int)
        case report(LinkState, String)
    }

    /// `host:port`, for details; never a URL with a token.
    let endpoint: String
    let pingIntervalMillis: Int
    private(set) var phase = Phase.idle
    private(set) var state = LinkState.connecting
    /// A device token is known (configured, stored, or just registered).
    private(set) var hasToken: Bool
    private var backoff = Backoff()
    private let random: (Int) -> Int
    /// Why this side is closing the socket, for the next report.
    private var closeReason: String?
    private var closingRefused = false

    init(endpoint: String, hasToken: Bool, pingIntervalMillis: Int = 15_000, random: @escaping (Int) -> Int = Backoff.systemRandom) {
        self.endpoint = endpoint
        self.hasToken = hasToken
        self.pingIntervalMillis = pingIntervalMillis
        self.random = random
    }

    var isReady: Bool { phase == .ready }

    mutating func connect() -> [Action] {
        guard phase == .idle || phase == .waitingToRetry else { return [] }
        closeReason = nil
        closingRefused = false
        phase = hasToken ? .connecting : .registering
        var actions: [Action] = []
        if state != .badCredentials {
            actions += report(.connecting, hasToken ? "connecting to \(endpoint)" : "registering with \(endpoint)")
        }
        return actions + [hasToken ? .connect : .register]
    }

    mutating func registered() -> [Action] {
        guard phase == .registering else { return [] }
        hasToken = true
        phase = .connecting
        return report(.connecting, "registered; connecting to \(endpoint)") + [.connect]
    }

    /// `refused`: the server turned the setup token down (401/403); anything else is retried sooner.
    mutating func registrationFailed(_ reason: String, refused: Bool) -> [Action] {
        guard phase == .registering else { return [] }
        return retry(reason, refused: refused)
    }

    /// The WebSocket opened: catch up before calling the link connected.
    mutating func opened() -> [Action] {
        guard phase == .connecting else { return [] }
        phase = .catchingUp
        return [.armTick(afterMillis: pingIntervalMillis), .catchUp]
    }

    mutating func caughtUp() -> [Action] {
        guard phase == .catchingUp else { return [] }
        phase = .ready
        backoff.reset()
        return report(.connected, endpoint)
    }

    /// The catch-up `/sync` failed: drop the socket and start over (missed answers are still missed).
    mutating func catchUpFailed(_ reason: String) -> [Action] {
        guard phase == .catchingUp else { return [] }
        closeReason = reason
        return [.close(code: 4000, reason: "sync failed")]
    }

    /// A REST call was answered 401: the token no longer works.
    mutating func tokenRefused() -> [Action] {
        guard phase == .catchingUp || phase == .ready else { return [] }
        closingRefused = true
        return [.close(code: 4001, reason: "token refused")]
    }

    /// Every ping interval while the socket is open: ping, or give up on a server that answered
    /// none for two intervals.
    mutating func tick(millisSinceLastPong: Int) -> [Action] {
        guard phase == .catchingUp || phase == .ready else { return [] }
        guard millisSinceLastPong < Int64(2 * pingIntervalMillis) else {
            closeReason = "\(endpoint) answered no ping within \(Backoff.seconds(2 * pingIntervalMillis))"
            return [.close(code: 4000, reason: "no pong")]
        }
        return [.ping, .armTick(afterMillis: pingIntervalMillis)]
    }

    /// The socket closed, or never opened (`error`: libwebsockets' reason; a 401 at the upgrade
    /// reads "HS: ws upgrade unauthorized").
    mutating func closed(error: String?) -> [Action] {
        guard phase == .connecting || phase == .catchingUp || phase == .ready else { return [] }
        if closingRefused || error?.localizedCaseInsensitiveContains("unauthorized") == true {
            return retry("the token was refused by \(endpoint) (401)", refused: true)
        }
        return retry(closeReason ?? error.map { "\(endpoint): \($0)" } ?? "\(endpoint) closed the connection", refused: false)
    }

    private mutating func retry(_ why: String, refused: Bool) -> [Action] {
        phase = .waitingToRetry
        if refused { backoff.saturate() }
        let delay = backoff.next(random: random)
        let detail = "\(why); next try in \(Backoff.seconds(delay))"
        return [.cancelTick] + report(refused ? .badCredentials : .retrying, detail) + [.armRetry(afterMillis: delay)]
    }

    private mutating func report(_ newState: LinkState, _ detail: String) -> [Action] {
        state = newState
        return [.report(newState, detail)]
    }
}
