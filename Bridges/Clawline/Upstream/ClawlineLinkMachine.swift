import ClawlineWire
import RelayCore

/// The protocol of one link to a Clawline provider, as a pure state machine: pair once (waiting
/// for the provider's admin), authenticate on every socket with the replay cursor, hand the ready
/// link's frames over. Refusals that will not heal (pairing denied, token refused or revoked,
/// another connection took the device) stop it until the relay restarts. Connecting, pings,
/// backoff and reports are its `LinkLifecycle`'s; `ClawlineLink` runs it.
struct ClawlineLinkMachine: LinkMachine {
    /// Where one socket stands.
    enum Session: Equatable, Sendable {
        /// `pair_request` sent; the provider answers once its admin decides.
        case pairing
        /// Paired on this socket; it closes and the next one authenticates.
        case paired
        case authenticating
        case ready
    }

    enum Own: Equatable, Sendable {
        case storePairing(token: String, userID: String)
        /// Authenticated; the replay the result announces follows.
        case up(ServerFrame.AuthResult)
        /// A frame on the authenticated link.
        case frame(ServerFrame)
        /// The replay cursor moved: keep it in the account file.
        case advanceCursor(String)
        /// The authenticated connection is gone.
        case down
        /// Refused for good (the detail is reported as `failed`): what waits on the link fails.
        case stopped(String)
        /// A frame that is not a JSON object with a type, ignored.
        case undecodable(bytes: Int)
    }

    struct Settings: Sendable {
        /// `host:port`, for details.
        var endpoint: String
        var deviceID: String
        var claimedName: String
        /// The account file, named in details that ask the operator to delete it.
        var accountFile: String
        var tickMillis = 15_000
        /// Nothing heard (no frame, no pong) for this long: the socket is dead.
        var silenceMillis = 45_000
        var authTimeoutMillis = 15_000
        /// How soon a device the provider still holds for approval asks again.
        var notApprovedRetryMillis = 30_000
    }

    let settings: Settings
    private(set) var lifecycle: LinkLifecycle<Session>
    private(set) var token: String?
    /// The last stored event the account has seen: `auth`'s `lastMessageId`.
    private(set) var cursor: String?

    init(settings: Settings, token: String?, cursor: String?, random: @escaping (Int) -> Int = Backoff.systemRandom) {
        self.settings = settings
        self.token = token?.isEmpty == false ? token : nil
        self.cursor = cursor
        let timing = LinkTiming(
            tickMillis: settings.tickMillis,
            watchdog: .silence(millis: settings.silenceMillis),
            handshakeTimeoutMillis: settings.authTimeoutMillis
        )
        lifecycle = LinkLifecycle(endpoint: settings.endpoint, timing: timing, random: random)
    }

    var phase: LinkLifecycle<Session>.Phase { lifecycle.phase }
    var state: LinkState { lifecycle.state }
    var isReady: Bool { lifecycle.isEstablished }

    mutating func connect() -> [Action] { lifecycle.connect(reporting: "connecting to \(settings.endpoint)") }

    /// The socket is open: authenticate with the stored token, or ask to pair.
    mutating func opened(now: Int64) -> [Action] {
        if let token {
            let auth = ClientFrame.auth(ClientFrame.Auth(token: token, deviceId: settings.deviceID, lastMessageId: cursor)).encoded()
            return lifecycle.opened(now: now, session: .authenticating, awaiting: "auth_result", first: [.send(auth)])
        }
        let request = ClientFrame.pairRequest(Self.pairRequest(deviceID: settings.deviceID, claimedName: settings.claimedName)).encoded()
        let opened: [Action] = lifecycle.opened(now: now, session: .pairing, awaiting: nil, first: [.send(request)])
        guard lifecycle.session == .pairing else { return opened }
        return opened + lifecycle.report(.awaitingApproval, approvalDetail)
    }

    mutating func received(_ bytes: [UInt8], now: Int64) -> [Action] {
        lifecycle.heard(now: now)
        guard lifecycle.isOpen else { return [] }
        guard let frame = ServerFrame.decode(bytes) else { return [.own(.undecodable(bytes: bytes.count))] }
        return received(frame)
    }

    /// A decoded frame (`received(_:now:)` decodes it after counting it as heard).
    mutating func received(_ frame: ServerFrame) -> [Action] {
        switch (lifecycle.session, frame) {
        case (.pairing, .pairResult(let result)): return paired(result)
        case (.authenticating, .authResult(let result)): return authenticated(result)
        case (.pairing, .error(let error)), (.authenticating, .error(let error)):
            return refused(code: error.code, message: error.message)
        case (.ready, .error(let error)) where error.messageId == nil:
            let refusal = refused(code: error.code, message: error.message)
            return isReady ? refusal + deliver(frame) : refusal
        case (.ready, _): return deliver(frame)
        default: return []
        }
    }

    mutating func tick(now: Int64, silentMillis: Int) -> [Action] { lifecycle.tick(now: now, silentMillis: silentMillis) }

    /// The turns need a fresh connection (the provider only ends an unanswered message's stream
    /// when its socket closes): close and come back at the shortest delay.
    mutating func resync(_ reason: String) -> [Action] {
        guard isReady else { return [] }
        lifecycle.resetBackoff()
        return close(because: reason)
    }

    /// While the device waits for approval, every report says so first.
    mutating func closed(code: UInt16?, error: String?) -> [Action] {
        let down: [Action] = isReady ? [.own(.down)] : []
        var closing = lifecycle.closing ?? lifecycle.peerClosed(code: code, error: error)
        if closing.reason != nil, lifecycle.state == .awaitingApproval || closing.state == .awaitingApproval {
            let why = lifecycle.closing?.reason ?? "the socket closed"
            closing = LinkClosing("\(approvalDetail); \(why)", state: .awaitingApproval, retryAfterMillis: closing.retryAfterMillis)
        }
        return down + lifecycle.retry(closing)
    }

    mutating func stop() -> [Action] { (isReady ? [.own(.down)] : []) + lifecycle.stop(nil) }

    // MARK: Steps

    /// The account's `pair_request`: a Linux device named as the operator configured it.
    static func pairRequest(deviceID: String, claimedName: String) -> ClientFrame.PairRequest {
        let info = ClientFrame.PairRequest.deviceInfo(platform: "linux", model: "clawrelay", appVersion: RelayVersion.current)
        return ClientFrame.PairRequest(deviceId: deviceID, claimedName: claimedName, deviceInfo: info)
    }

    private var approvalDetail: String {
        "device \(settings.deviceID) (\"\(settings.claimedName)\") waits for approval on \(settings.endpoint); approve it there "
            + "(on a clawrelay: clawrelay devices approve \(settings.deviceID))"
    }

    private mutating func deliver(_ frame: ServerFrame) -> [Action] {
        guard case .message(let event) = frame, event.isStored else { return [.own(.frame(frame))] }
        cursor = event.id
        return [.own(.frame(frame)), .own(.advanceCursor(event.id))]
    }

    private mutating func paired(_ result: ServerFrame.PairResult) -> [Action] {
        if result.success, let token = result.token, !token.isEmpty, let userID = result.userId, !userID.isEmpty {
            self.token = token
            cursor = nil
            lifecycle.update(.paired)
            return [.own(.storePairing(token: token, userID: userID))]
                + lifecycle.report(.connecting, "paired with \(settings.endpoint) as device \(settings.deviceID), user \(userID); authenticating")
                + lifecycle.close(LinkClosing(nil, retryAfterMillis: 0), code: 1000, reason: "paired")
        }
        switch result.reason.flatMap(PairRefusal.init(rawValue:)) {
        case .pairDenied:
            return stop("the admin of \(settings.endpoint) denied device \(settings.deviceID) (pair_denied); restart the relay to ask again")
        case .pairRejected:
            return stop(
                "\(settings.endpoint) refuses device \(settings.deviceID) (pair_rejected: it is denylisted there); allow it there "
                    + "(on a clawrelay: clawrelay devices allow \(settings.deviceID)), "
                    + "or delete \(settings.accountFile) for a new device id, and restart the relay"
            )
        case .pairTimeout:
            return close(because: "nobody decided within the provider's pending time (pair_timeout)")
        case nil:
            return close(because: "pairing failed (\(result.reason ?? "no reason"))")
        }
    }

    private mutating func authenticated(_ result: ServerFrame.AuthResult) -> [Action] {
        guard result.success else {
            switch result.reason {
            case AuthRefusal.deviceNotApproved.rawValue:
                let why = "the provider still holds the device for approval (device_not_approved)"
                return lifecycle.close(LinkClosing(why, state: .awaitingApproval, retryAfterMillis: settings.notApprovedRetryMillis))
            case AuthRefusal.authFailed.rawValue, AuthRefusal.tokenRevoked.rawValue, "token_expired":  // the last: another provider's
                return stop(refusedToken(result.reason ?? ""))
            default:
                return close(because: "auth refused (\(result.reason ?? "no reason"))")
            }
        }
        let user = result.userId.map { ", user \($0)" } ?? ""
        let replay = result.historyReset == true ? "; history reset" : result.replayTruncated == true ? "; replay truncated" : ""
        return [.own(.up(result))] + lifecycle.establish(.ready, detail: "\(settings.endpoint) as device \(settings.deviceID)\(user)\(replay)")
    }

    private mutating func refused(code: String, message: String) -> [Action] {
        switch code {
        case ClawlineErrorCode.authFailed.rawValue, ClawlineErrorCode.tokenRevoked.rawValue:
            return stop(refusedToken(code))
        case ClawlineErrorCode.sessionReplaced.rawValue:
            return stop("another connection authenticated as device \(settings.deviceID) (session_replaced); restart the relay to take it back")
        case ClawlineErrorCode.invalidMessage.rawValue where lifecycle.session == .pairing:
            return stop(
                "\(settings.endpoint) refused the pair_request: \(message); delete \(settings.accountFile) and restart the relay to pair again"
            )
        case _ where isReady:
            return []
        default:
            return close(because: "\(settings.endpoint) answered \(code): \(message)")
        }
    }

    private func refusedToken(_ reason: String) -> String {
        "\(settings.endpoint) refused the account's token (\(reason)); delete \(settings.accountFile) and restart the relay to pair again"
    }

    private mutating func stop(_ detail: String) -> [Action] {
        (isReady ? [.own(.down)] : []) + lifecycle.stop(detail) + [.own(.stopped(detail))]
    }

    private mutating func close(because reason: String) -> [Action] { lifecycle.close(LinkClosing(reason)) }
}
