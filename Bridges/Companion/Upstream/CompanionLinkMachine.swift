import CompanionWire
import RelayCore

/// The protocol of one link to a Companion server, as a pure state machine: wait for `welcome`,
/// ping with `ping` frames, take a close 1008 before `welcome` as a refused token. Connecting,
/// the watchdog (two silent intervals), backoff and reports are its `LinkLifecycle`'s;
/// `CompanionLink` runs it.
struct CompanionLinkMachine: LinkMachine {
    /// Where one socket stands.
    enum Session: Equatable, Sendable {
        /// The socket is open; the server has not said `welcome` yet.
        case awaitingWelcome
        case ready
    }

    enum Own: Equatable, Sendable {
        /// A frame on the ready link.
        case frame(CompanionServerEvent)
        /// The connection that carried turns is gone.
        case down
        /// A ping interval passed with a socket open (turns expire on it).
        case tick(Int64)
    }

    /// The close code with which Companion servers refuse a token.
    static let policyViolation = CompanionClose.authenticationRequired.code

    private(set) var lifecycle: LinkLifecycle<Session>
    private var pings = 0

    /// `endpoint` is `host:port`, for details; never the path (it carries the token). `welcome`
    /// must come within one ping interval; two intervals without a frame mean a dead server.
    init(endpoint: String, pingIntervalMillis: Int = 15_000, random: @escaping (Int) -> Int = Backoff.systemRandom) {
        let timing = LinkTiming(
            tickMillis: pingIntervalMillis,
            watchdog: .silentTicks(2),
            handshakeTimeoutMillis: pingIntervalMillis,
            handshakeCloseReason: "no welcome",
            silenceCloseReason: "no pong"
        )
        lifecycle = LinkLifecycle(endpoint: endpoint, timing: timing, random: random)
    }

    var endpoint: String { lifecycle.endpoint }
    var phase: LinkLifecycle<Session>.Phase { lifecycle.phase }
    var state: LinkState { lifecycle.state }
    var isReady: Bool { lifecycle.isEstablished }

    mutating func connect() -> [Action] { lifecycle.connect(reporting: "connecting to \(endpoint)") }

    /// The WebSocket opened; the server speaks first.
    mutating func opened(now: Int64) -> [Action] { lifecycle.opened(now: now, session: .awaitingWelcome, awaiting: "welcome") }

    mutating func received(_ bytes: [UInt8], now: Int64) -> [Action] {
        lifecycle.heard(now: now)
        return received(CompanionServerEvent.decode(bytes) ?? .other(type: ""))
    }

    /// A decoded frame (`received(_:now:)` decodes it after counting it as heard).
    mutating func received(_ frame: CompanionServerEvent) -> [Action] {
        switch (lifecycle.session, frame) {
        case (.ready, _):
            return [.own(.frame(frame))]
        case (.awaitingWelcome, .welcome(let version)):
            return lifecycle.establish(.ready, detail: "\(endpoint)\(version.map { ", server \($0)" } ?? "")")
        default:
            return []
        }
    }

    /// Every ping interval with a socket open: the turns' tick, then the watchdog, whose pings
    /// are `ping` frames here.
    mutating func tick(now: Int64, silentMillis: Int) -> [Action] {
        guard lifecycle.isOpen else { return [] }
        var actions: [Action] = [.own(.tick(now))]
        for action: Action in lifecycle.tick(now: now, silentMillis: silentMillis) {
            guard action == .ping else {
                actions.append(action)
                continue
            }
            pings += 1
            let ping = Ping(timestamp: .string(CompanionTimestamp.string(now)))
            actions.append(.send(CompanionFrame(ping, requestID: "ping-\(pings)", at: now).encoded()))
        }
        return actions
    }

    /// The socket closed (`code` as the server sent it) or never opened (`error`). A close 1008
    /// before `welcome` is a refused token: `bad_credentials`, retried at the longest step.
    mutating func closed(code: UInt16?, error: String?) -> [Action] {
        let down: [Action] = isReady ? [.own(.down)] : []
        guard lifecycle.session == .awaitingWelcome, code == Self.policyViolation else { return down + lifecycle.closed(code: code, error: error) }
        return lifecycle.retry(LinkClosing("\(endpoint) refused the token (close 1008)", state: .badCredentials, saturatesBackoff: true))
    }

    mutating func stop() -> [Action] { (isReady ? [.own(.down)] : []) + lifecycle.stop(nil) }
}
