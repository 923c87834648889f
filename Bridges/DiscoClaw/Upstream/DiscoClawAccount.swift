import Foundation
import Logging
import RelayCore
import RelayHTTP
import RelayTransport

/// How an upstream DiscoClaw account proves itself: a device token it was given, or a setup
/// token it registers with once (the device token it gets is kept in its state file).
public enum DiscoClawCredential: Sendable, Equatable, CustomStringConvertible {
    case token(String)
    case setupToken(String)

    /// Never the secret itself.
    public var description: String {
        switch self {
        case .token: "token"
        case .setupToken: "setup_token"
        }
    }
}

/// A client account on a DiscoClaw server (a real one, or another relay's `[discoclaw]`).
///
/// Each relay conversation gets its own upstream conversation; a turn is a `POST` of its text,
/// its answer streams back over the account's WebSocket, and a `/sync` after each reconnect
/// recovers answers that finished while the socket was down.
public final class DiscoClawAccount: Backend {
    public let name: String
    private let loop: ServiceLoop
    private let poster: LoopBound<DiscoClawAccountTurns>

    /// Loop thread. `baseURL` is `http(s)://host:port[/prefix]`; `target` is the same server's
    /// WebSocket (`<prefix>/ws`, the token is added per connection). State is kept in
    /// `accountsDirectory/<name>.discoclaw.json`.
    public init(
        name: String,
        baseURL: String,
        target: ServiceLoop.ClientTarget,
        credential: DiscoClawCredential,
        titlePrefix: String?,
        accountsDirectory: String,
        client: HTTPClient,
        loop: ServiceLoop,
        logger: Logger,
        onState: @escaping (LinkState, String) -> Void
    ) {
        self.name = name
        self.loop = loop
        let rest = DiscoClawREST(baseURL: baseURL, allowSelfSigned: target.allowSelfSigned, client: client, loop: loop)
        let path = DiscoClawAccountFile.path(directory: accountsDirectory, account: name)
        let (stored, note) = DiscoClawAccountFile.load(path: path, server: rest.baseURL)
        if let note { logger.notice("DiscoClaw account state not reused", metadata: ["account": "\(name)", "why": "\(note)"]) }
        let token: String? =
            switch credential {
            case .token(let token): token
            case .setupToken: stored.token
            }
        rest.token = token
        let link = DiscoClawLink(name: name, target: target, token: token, connector: loop, logger: logger, onState: onState)
        if case .setupToken = credential {
            // The stored token is the stored device's (a configured token names no device).
            rest.deviceID = stored.deviceId
            link.deviceID = stored.deviceId
        }
        let poster = DiscoClawAccountTurns(
            name: name,
            link: link,
            rest: rest,
            credential: credential,
            titlePrefix: titlePrefix,
            stored: stored,
            writer: DiscoClawAccountWriter(path: path, logger: logger),
            clock: SystemClock(),
            loop: loop,
            logger: logger
        )
        self.poster = LoopBound(poster, loop: loop)
    }

    /// Opens the link; it heals itself from then on. Loop thread.
    public func connect() { poster.value.link.connect() }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle {
        poster.startTurn(turn, events: events)
    }
}
