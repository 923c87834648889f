import RelayCore

/// The life of one link to a Clawline provider, as a pure state machine: pair once (waiting for
/// the provider's admin), authenticate on every connection, watch the socket with pings, back off
/// and come back. Refusals that will not heal (pairing denied, token refused or revoked, another
/// connection took the device) stop it until the relay restarts. `ProviderLink` performs its actions.
struct ProviderLinkMachine {
    enum Phase: Equatable, Sendable {
        case idle
        case connecting
        /// `pair_request` sent; the provider answers once its admin decides.
        case pairing
        /// Paired on this socket; it closes and the next one authenticates.
        case paired
        case authenticating
        case ready
        case waitingToRetry
        /// Refused for good: nothing more happens until the relay restarts.
        case stopped
    }

    enum Action: Equatable, Sendable {
        case connect
        case send(String)
        case ping
        case close(code: UInt16, reason: String)
        /// Run `tick` after this long (replaces the pending tick).
        case armTick(afterMillis: Int)
        case cancelTick
        /// Run `connect` after this long.
        case armRetry(afterMillis: Int)
        case report(LinkState, String)
        case storePairing(token: String, userID: String)
        /// Authenticated; the replay the result announces follows.
        case up(ProviderFrame.AuthResult)
        /// The authenticated connection is gone.
        case down
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
    private let random: (Int) -> Int
    private(set) var phase = Phase.idle
    private(set) var state = LinkState.connecting
    private(set) var token: String?
    private var backoff = Backoff()
    private var openedAt: Int64 = 0
    /// Why the socket is about to close, for the next report.
    private var closeReason: String?
    /// A fixed delay for the next retry instead of the backoff.
    private var retryAfter: Int?

    init(settings: Settings, token: String?, random: @escaping (Int) -> Int = Backoff.systemRandom) {
        self.settings = settings
        self.token = token?.isEmpty == false ? token : nil
        self.random = random
    }

    var isReady: Bool { phase == .ready }

    mutating func connect() -> [Action] {
        guard phase == .idle || phase == .waitingToRetry else { return [] }
        phase = .connecting
        closeReason = nil
        retryAfter = nil
        let actions = state == .awaitingApproval ? [] : report(.connecting, "connecting to \(settings.endpoint)")
        return actions + [.connect]
    }

    /// The socket is open: authenticate with the stored token, or ask to pair.
    mutating func opened(cursor: String?, now: Int64) -> [Action] {
        guard phase == .connecting else { return [] }
        openedAt = now
        let tick = Action.armTick(afterMillis: settings.tickMillis)
        if let token {
            phase = .authenticating
            return [.send(ProviderRequest.auth(token: token, deviceID: settings.deviceID, lastMessageID: cursor)), tick]
        }
        phase = .pairing
        return [.send(ProviderRequest.pairRequest(deviceID: settings.deviceID, claimedName: settings.claimedName)), tick]
            + report(.awaitingApproval, approvalDetail)
    }

    mutating func received(_ frame: ProviderFrame) -> [Action] {
        switch (phase, frame) {
        case (.pairing, .pairResult(let result)): return paired(result)
        case (.authenticating, .authResult(let result)): return authenticated(result)
        case (.pairing, .error(let code, let message, _)), (.authenticating, .error(let code, let message, _)),
            (.ready, .error(let code, let message, nil)):
            return refused(code: code, message: message)
        default: return []
        }
    }

    /// Every tick interval while a socket is open: ping, or give up on a silent provider.
    mutating func tick(now: Int64, silentMillis: Int) -> [Action] {
        switch phase {
        case .authenticating where now - openedAt >= Int64(settings.authTimeoutMillis):
            return close(because: "\(settings.endpoint) sent no auth_result within \(Backoff.seconds(settings.authTimeoutMillis))")
        case .pairing, .authenticating, .ready:
            guard silentMillis < settings.silenceMillis else {
                return close(because: "\(settings.endpoint) answered no ping within \(Backoff.seconds(settings.silenceMillis))")
            }
            return [.ping, .armTick(afterMillis: settings.tickMillis)]
        case .idle, .connecting, .paired, .waitingToRetry, .stopped:
            return []
        }
    }

    /// The turns need a fresh connection (the provider only ends an unanswered message's stream
    /// when its socket closes): close and come back at once.
    mutating func resync(_ reason: String) -> [Action] {
        guard phase == .ready else { return [] }
        backoff.reset()
        return close(because: reason)
    }

    /// The socket closed (`code` as the provider sent it) or never opened (`error`).
    mutating func closed(code: UInt16?, error: String?) -> [Action] {
        let wasReady = phase == .ready
        var actions: [Action] = wasReady ? [.cancelTick, .down] : [.cancelTick]
        switch phase {
        case .idle, .waitingToRetry, .stopped:
            return []
        case .paired:
            phase = .waitingToRetry
            return actions + [.armRetry(afterMillis: 0)]
        case .connecting, .pairing, .authenticating, .ready:
            phase = .waitingToRetry
            let delay = retryAfter ?? backoff.next(random: random)
            let next = "next try in \(Backoff.seconds(delay))"
            if state == .awaitingApproval {
                actions += report(.awaitingApproval, "\(approvalDetail); \(closeReason ?? "the socket closed"), \(next)")
            } else {
                let why =
                    closeReason ?? error ?? code.map { "\(settings.endpoint) closed the connection (\($0))" }
                    ?? "\(settings.endpoint) closed the connection"
                actions += report(.retrying, "\(why); \(next)")
            }
            return actions + [.armRetry(afterMillis: delay)]
        }
    }

    // MARK: Steps

    private var approvalDetail: String {
        "device \(settings.deviceID) (\"\(settings.claimedName)\") waits for approval on \(settings.endpoint); approve it there "
            + "(on a clawrelay: clawrelay devices approve \(settings.deviceID))"
    }

    private mutating func paired(_ result: ProviderFrame.PairResult) -> [Action] {
        if result.success, let token = result.token, !token.isEmpty, let userID = result.userID, !userID.isEmpty {
            self.token = token
            phase = .paired
            return [.storePairing(token: token, userID: userID)]
                + report(.connecting, "paired with \(settings.endpoint) as device \(settings.deviceID), user \(userID); authenticating")
                + [.close(code: 1000, reason: "paired")]
        }
        switch result.reason {
        case "pair_denied":
            return stop("the admin of \(settings.endpoint) denied device \(settings.deviceID) (pair_denied); restart the relay to ask again")
        case "pair_rejected":
            return stop(
                "\(settings.endpoint) refuses device \(settings.deviceID) (pair_rejected: it is denylisted there); allow it there "
                    + "(on a clawrelay: clawrelay devices allow \(settings.deviceID)), "
                    + "or delete \(settings.accountFile) for a new device id, and restart the relay"
            )
        case "pair_timeout":
            return close(because: "nobody decided within the provider's pending time (pair_timeout)")
        default:
            return close(because: "pairing failed (\(result.reason ?? "no reason"))")
        }
    }

    private mutating func authenticated(_ result: ProviderFrame.AuthResult) -> [Action] {
        guard result.success else {
            switch result.reason {
            case "device_not_approved":
                retryAfter = settings.notApprovedRetryMillis
                state = .awaitingApproval
                return close(because: "the provider still holds the device for approval (device_not_approved)")
            case "auth_failed", "token_expired", "token_revoked":
                return stop(refusedToken(result.reason ?? ""))
            default:
                return close(because: "auth refused (\(result.reason ?? "no reason"))")
            }
        }
        phase = .ready
        backoff.reset()
        let user = result.userID.map { ", user \($0)" } ?? ""
        let replay = result.historyReset ? "; history reset" : result.replayTruncated ? "; replay truncated" : ""
        return [.up(result)] + report(.connected, "\(settings.endpoint) as device \(settings.deviceID)\(user)\(replay)")
    }

    private mutating func refused(code: String, message: String) -> [Action] {
        switch code {
        case ClawlineErrorCode.authFailed.rawValue, ClawlineErrorCode.tokenRevoked.rawValue:
            return stop(refusedToken(code))
        case ClawlineErrorCode.sessionReplaced.rawValue:
            return stop("another connection authenticated as device \(settings.deviceID) (session_replaced); restart the relay to take it back")
        case ClawlineErrorCode.invalidMessage.rawValue where phase == .pairing:
            return stop(
                "\(settings.endpoint) refused the pair_request: \(message); delete \(settings.accountFile) and restart the relay to pair again"
            )
        case _ where phase == .ready:
            return []
        default:
            return close(because: "\(settings.endpoint) answered \(code): \(message)")
        }
    }

    private func refusedToken(_ reason: String) -> String {
        "\(settings.endpoint) refused the account's token (\(reason)); delete \(settings.accountFile) and restart the relay to pair again"
    }

    private mutating func stop(_ detail: String) -> [Action] {
        let wasReady = phase == .ready
        phase = .stopped
        return (wasReady ? [.down] : []) + [.cancelTick] + report(.failed, detail) + [.close(code: 1000, reason: "")]
    }

    private mutating func close(because reason: String) -> [Action] {
        closeReason = reason
        return [.close(code: 4000, reason: "")]
    }

    private mutating func report(_ newState: LinkState, _ detail: String) -> [Action] {
        state = newState
        return [.report(newState, detail)]
    }

}
