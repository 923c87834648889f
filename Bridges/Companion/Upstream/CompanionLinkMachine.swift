import RelayCore

/// The life of one link to a Companion server, as a pure state machine: connect, wait for
/// `welcome`, ping, notice a dead or refusing server, back off, try again. `CompanionLink`
/// performs its actions on the service loop.
struct CompanionLinkMachine {
    enum Phase: Equatable, Sendable {
        case idle
        case connecting
        /// The socket is open; the server has not said `welcome` yet.
        case awaitingWelcome
        case ready
        case waitingToRetry
    }

    enum Action: Equatable, Sendable {
        case connect
        case send(String)
        case close(code: UInt16, reason: String)
        /// Run `tick` after this long (replaces the pending tick).
        case armTick(afterMillis: Int)
        case cancelTick
        /// Run `connect` after this long.
        case armRetry(afterMillis: Int)
        case report(LinkState, String)
        /// The connection that carried turns is gone.
        case down
    }

    /// The close code with which Companion servers refuse a token.
    static let policyViolation: UInt16 = 1008

    /// `host:port`, for details; never the path (it carries the token).
    let endpoint: String
    let pingIntervalMillis: Int
    /// Returns a number in `0...bound`; injected so tests are deterministic.
    private let random: (Int) -> Int
    private(set) var phase = Phase.idle
    private(set) var state = LinkState.connecting
    private(set) var backoff = Backoff()
    private var heardSinceTick = false
    private var silentTicks = 0
    private var pings = 0
    /// Why this side is closing the socket, for the next report.
    private var closeReason: String?

    init(endpoint: String, pingIntervalMillis: Int = 15_000, random: @escaping (Int) -> Int = Backoff.systemRandom) {
        self.endpoint = endpoint
        self.pingIntervalMillis = pingIntervalMillis
        self.random = random
    }

    var isReady: Bool { phase == .ready }

    mutating func connect() -> [Action] {
        guard phase == .idle || phase == .waitingToRetry else { return [] }
        phase = .connecting
        closeReason = nil
        var actions: [Action] = []
        if state != .badCredentials { actions += report(.connecting, "connecting to \(endpoint)") }
        return actions + [.connect]
    }

    /// The WebSocket opened; the server speaks first.
    mutating func opened() -> [Action] {
        phase = .awaitingWelcome
        heardSinceTick = false
        silentTicks = 0
        return [.armTick(afterMillis: pingIntervalMillis)]
    }

    mutating func received(_ frame: UpstreamFrame) -> [Action] {
        heardSinceTick = true
        guard case .welcome(let version) = frame, phase == .awaitingWelcome else { return [] }
        phase = .ready
        backoff.reset()
        let server = version.map { ", server \($0)" } ?? ""
        return report(.connected, "\(endpoint)\(server)")
    }

    /// Every ping interval: ping a ready server, give up on a silent one (two intervals without
    /// any frame, or no `welcome` within one).
    mutating func tick(now: Int64) -> [Action] {
        silentTicks = heardSinceTick ? 0 : silentTicks + 1
        heardSinceTick = false
        switch phase {
        case .awaitingWelcome:
            closeReason = "\(endpoint) sent no welcome within \(Backoff.seconds(pingIntervalMillis))"
            return [.close(code: 4000, reason: "no welcome")]
        case .ready where silentTicks >= 2:
            closeReason = "\(endpoint) answered no ping within \(Backoff.seconds(2 * pingIntervalMillis))"
            return [.close(code: 4000, reason: "no pong")]
        case .ready:
            pings += 1
            return [.send(UpstreamRequest.ping(requestID: "ping-\(pings)", at: now)), .armTick(afterMillis: pingIntervalMillis)]
        case .idle, .connecting, .waitingToRetry:
            return []
        }
    }

    /// The socket closed (`code` as the server sent it) or never opened (`error`). The retry waits
    /// the backoff ±20 % (1 s doubling to 30 s, reset by `welcome`; 30 s after a refused token).
    mutating func closed(code: UInt16?, error: String?) -> [Action] {
        guard phase != .idle, phase != .waitingToRetry else { return [] }
        let wasReady = phase == .ready
        let refused = phase == .awaitingWelcome && code == Self.policyViolation
        phase = .waitingToRetry
        if refused { backoff.saturate() }
        let delay = backoff.next(random: random)
        var actions: [Action] = [.cancelTick]
        if wasReady { actions.append(.down) }
        let retry = "next try in \(Backoff.seconds(delay))"
        if refused {
            actions += report(.badCredentials, "\(endpoint) refused the token (close 1008); \(retry)")
        } else {
            let why = closeReason ?? error ?? code.map { "\(endpoint) closed the connection (\($0))" } ?? "\(endpoint) closed the connection"
            actions += report(.retrying, "\(why); \(retry)")
        }
        return actions + [.armRetry(afterMillis: delay)]
    }

    private mutating func report(_ newState: LinkState, _ detail: String) -> [Action] {
        state = newState
        return [.report(newState, detail)]
    }

}
