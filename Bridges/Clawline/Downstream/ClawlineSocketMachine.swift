import ClawlineWire
import RelayCore

/// The protocol logic of one Clawline socket, as a value: where the socket is (fresh, being
/// authenticated, live, closed), what it may do now, and what each frame, core answer or bus event
/// leads to. Every method takes an input and returns the actions the downstream performs; the
/// machine never touches a socket or the core, so it is tested on its own.
///
/// What several sockets share (rate limits per device, the device's newest socket, pairing
/// waiters, typing timers) is the downstream's: it answers the machine's `RateLimit` questions and
/// carries out `pair`, `decide`, `authenticate`, `submit` and `typing`.
struct ClawlineSocketMachine {
    enum Phase: Equatable, Sendable {
        /// Open: it may pair or authenticate.
        case fresh
        /// The token checked out; the device record and the replay are being read while live
        /// events wait in `held`.
        case authenticating
        case live
        case closed
    }

    let sessionID: String
    /// For the rate-limit errors' wording.
    let messagesPerSecond: Int
    let typingPerSecond: Int
    private(set) var phase = Phase.fresh
    /// The device authenticated (or authenticating) on this socket; empty before.
    private(set) var deviceID = ""
    private(set) var userID: String?
    /// The user's timeline (resolved at auth).
    private(set) var conversationID = ""
    /// In the admins' audience: hears and may write to the admin channel.
    private(set) var isAdmin = false
    /// On the core's bus and counted in its device's presence.
    private(set) var isAttached = false
    /// The device whose `pair_request` this socket waits on.
    private(set) var pairingDeviceID: String?
    /// Per audience, events with a seq at or below this were in the replay and are not sent again.
    private(set) var highWater: [String: Int64] = [:]
    /// Live events that arrived while the replay was read.
    private(set) var held: [BusEvent] = []

    init(sessionID: String = "sess_" + Identifiers.newUUID(), messagesPerSecond: Int = 5, typingPerSecond: Int = 2) {
        self.sessionID = sessionID
        self.messagesPerSecond = messagesPerSecond
        self.typingPerSecond = typingPerSecond
    }

    var isAuthenticated: Bool { phase == .authenticating || phase == .live }

    /// A live admin socket: it is asked about new pairing requests.
    var hearsPairingRequests: Bool { phase == .live && isAdmin }

    // MARK: Frames

    /// A decoded frame: refused here, or handed to the downstream (`limits` answers whether the
    /// device is still within a rate limit, counting the attempt).
    mutating func received(_ frame: ClientFrame, limits: (RateLimit) -> Bool) -> Action {
        guard phase != .closed else { return .none }
        switch frame {
        case .pairRequest(let request):
            guard limits(.pairRequests(deviceID: request.deviceId)) else { return .fail(.tooManyPairRequests) }
            return .pair(request)
        case .pairDecision(let decision):
            guard phase == .live, isAdmin else { return .fail(.onlyAdminsDecide) }
            return .decide(decision)
        case .auth(let auth):
            guard phase == .fresh else { return .fail(.alreadyAuthenticated) }
            guard limits(.authAttempts(deviceID: auth.deviceId)) else { return .fail(.tooManyAuthAttempts) }
            return .authenticate(auth)
        case .message(let message):
            guard isAuthenticated else { return .fail(.authenticateFirst) }
            guard limits(.messages) else { return .fail(ClawlineError.tooManyMessages(perSecond: messagesPerSecond).about(message.id)) }
            guard message.channel == .personal || isAdmin else { return .fail(ClawlineError.adminChannelOnly.about(message.id)) }
            return .submit(message)
        case .typing(let typing):
            guard isAuthenticated else { return .fail(.authenticateFirst) }
            guard limits(.typing) else { return .fail(.tooManyTypingEvents(perSecond: typingPerSecond)) }
            return .typing(active: typing.active)
        }
    }

    /// A frame that did not decode (or a binary one: `.refused(.binaryFrame)`).
    mutating func refused(_ rejection: FrameRejection, limits: (RateLimit) -> Bool) -> Action {
        guard phase != .closed else { return .none }
        switch rejection {
        case .malformed:
            return .close(code: ClawlineCloseCode.protocolError, reason: "malformed JSON")
        case .refused(let error) where error.code == .payloadTooLarge:
            return .fail(limits(.oversized) ? error : error.repeatedTooOften)
        case .refused(let error):
            return .fail(error)
        }
    }

    /// What the core made of a `message` this socket submitted.
    mutating func submitted(_ outcome: SubmitOutcome, clientID: String, limits: (RateLimit) -> Bool) -> Action {
        guard isAuthenticated else { return .none }
        switch outcome {
        case .accepted: return .ack(clientID, firstTime: true)
        case .duplicate(.failed, _, _), .duplicate(.aborted, _, _): return .fail(ClawlineError.failedBefore.about(clientID))
        case .duplicate: return .ack(clientID, firstTime: false)
        case .mismatch: return .fail(ClawlineError.idReused.about(clientID))
        case .rejected(let error as ClawlineError): return refused(.refused(error), limits: limits)
        case .rejected: return .none
        case .missingAsset(let assetID): return .fail(ClawlineError.assetNotFound(assetID).about(clientID))
        case .queueFull: return .fail(ClawlineError.queueFull.about(clientID))
        case .storeFailed: return .fail(ClawlineError.notStored.about(clientID))
        }
    }

    // MARK: Bus events

    mutating func deliver(_ event: BusEvent) -> Delivery {
        switch phase {
        case .authenticating:
            held.append(event)
            return .hold
        case .live:
            return delivery(of: event)
        case .fresh, .closed:
            return .drop
        }
    }

    private func delivery(of event: BusEvent) -> Delivery {
        switch event {
        case .message(let chatEvent) where chatEvent.seq <= highWater[chatEvent.userID] ?? 0:
            return .drop
        case .turnFailed(let failure):
            // The others only see typing stop.
            guard failure.turn.deviceID == deviceID, failure.cause != .abandoned else { return .drop }
            let error = failure.cause == .aborted ? ClawlineError.answerAborted : .answerFailed(failure.shown)
            return .fail(error.about(failure.turn.clientID))
        case .tool, .status, .approval:
            return .drop  // Clawline has no tool or approval frames (approvals reach it as notes).
        case .message, .streaming, .assistantTyping:
            return .write
        }
    }

    // MARK: Auth

    /// The `auth` token checked out (signature, expiry, device): the socket listens from now on,
    /// holding live events until the replay is written, so nothing published meanwhile is lost.
    mutating func tokenVerified(deviceID: String, userID: String, isAdmin: Bool) -> [Action] {
        guard phase == .fresh else { return [] }
        phase = .authenticating
        self.deviceID = deviceID
        self.userID = userID
        isAttached = true
        // The token says admin: hear the admin channel from now on too (the device record decides).
        return [.attach(userID: userID)] + setAdmin(isAdmin)
    }

    /// `auth` refused: `auth_result` says why and the socket closes.
    mutating func authRefused(_ reason: AuthRefusal) -> [Action] {
        guard phase == .fresh || phase == .authenticating else { return [] }
        let leaving = detach()
        phase = .closed
        return leaving + [.send(.authResult(.refused(reason))), .close(code: ClawlineCloseCode.policy, reason: reason.rawValue)]
    }

    /// The core failed while authenticating (`server_error`, closed).
    mutating func authBroke(_ error: ClawlineError) -> [Action] {
        guard phase == .authenticating else { return [] }
        let leaving = detach()
        phase = .closed
        return leaving + [.fail(error)]
    }

    /// The device record allows it and the replay is read: `auth_result`, `user_info`, the replay
    /// (the newest events that fit `maxReplayBytes`: it is written at once and must stay well
    /// under the listener's unsent-bytes limit), what was held meanwhile, the snapshot of a stream
    /// already running and, for an admin, the requests waiting for a decision.
    /// The timeline was reset: its keys name `conversationID` now.
    mutating func followReset(to conversationID: String) { self.conversationID = conversationID }

    mutating func authenticated(_ grant: Grant, maxReplayBytes: Int) -> [Action] {
        guard phase == .authenticating else { return [] }
        let device = grant.device
        let window = grant.window
        conversationID = grant.conversationID
        var actions: [Action] = [.admit(deviceID: device.id, userID: device.userID)] + setAdmin(device.isAdmin)
        var frames: [[UInt8]] = []
        var bytes = 0
        for event in window.events.reversed() {
            let frame = FastFrames.message(event)
            bytes += frame.count
            if bytes > maxReplayBytes, !frames.isEmpty { break }
            frames.append(frame)
        }
        let result = ServerFrame.AuthResult(
            success: true,
            userId: device.userID,
            sessionId: sessionID,
            isAdmin: device.isAdmin,
            replayCount: frames.count,
            replayTruncated: window.truncated || frames.count < window.events.count,
            historyReset: window.historyReset
        )
        actions.append(.send(.authResult(result)))
        actions.append(.send(.userInfo(ServerFrame.UserInfo(userId: device.userID, isAdmin: device.isAdmin))))
        actions += frames.reversed().map(Action.write)
        if let newest = window.events.last(where: { $0.userID == device.userID }) {
            actions.append(.shown(conversationID: newest.conversationID, seq: newest.seq))
        }
        highWater = window.highWater
        phase = .live
        let held = self.held
        self.held = []
        for event in held + (grant.streams + (device.isAdmin ? grant.adminStreams : [])).filter({ !$0.content.isEmpty }).map(BusEvent.streaming) {
            let action = action(for: event)
            if action != .none { actions.append(action) }
        }
        if device.isAdmin {
            for request in grant.pendingPairings { actions.append(.send(.pairApprovalRequest(Self.approvalRequest(request)))) }
        }
        return actions
    }

    /// What an admin is asked about a pending request.
    static func approvalRequest(_ request: PairingRequests.Request) -> ServerFrame.PairApprovalRequest {
        ServerFrame.PairApprovalRequest(deviceId: request.deviceID, claimedName: request.claimedName, deviceInfo: request.info)
    }

    private mutating func action(for event: BusEvent) -> Action {
        switch deliver(event) {
        case .write: .event(event)
        case .fail(let error): .fail(error)
        case .hold, .drop: .none
        }
    }

    // MARK: Pairing

    /// The socket waits for the decision on `deviceID`'s request.
    mutating func waitForDecision(on deviceID: String) { pairingDeviceID = deviceID }

    mutating func paired(_ outcome: PairingOutcome) -> [Action] {
        guard phase != .closed else { return [] }
        pairingDeviceID = nil
        switch outcome {
        case .issued(let token, let userID, let deviceID):
            return [.sendToken(ServerFrame.PairResult(success: true, token: token, userId: userID), deviceID: deviceID)]
        case .refused(let reason):
            return [.send(.pairResult(.refused(reason))), .close(code: ClawlineCloseCode.normal, reason: reason.rawValue)]
        case .failed(let error):
            return [.fail(error)]
        }
    }

    // MARK: The device

    /// Another socket authenticated as this device: this one is told and closed.
    mutating func replaced() -> [Action] {
        guard phase != .closed else { return [] }
        let told: [Action] = [.fail(.sessionReplaced)]
        let leaving = detach()
        phase = .closed
        return told + leaving
    }

    /// The device was revoked or denylisted: its authenticated sockets close.
    mutating func revoked() -> [Action] {
        guard isAuthenticated else { return [] }
        let told: [Action] = [.fail(.revoked)]
        let leaving = detach()
        phase = .closed
        return told + leaving
    }

    /// The device's admin flag changed (an operator): the socket joins or leaves the admin channel
    /// and hears a new `user_info`.
    mutating func adminChanged(to admin: Bool) -> [Action] {
        guard phase == .live, isAdmin != admin, let userID else { return [] }
        return setAdmin(admin) + [.send(.userInfo(ServerFrame.UserInfo(userId: userID, isAdmin: admin)))]
    }

    /// The socket is gone.
    mutating func closed() -> [Action] {
        phase = .closed
        pairingDeviceID = nil
        return detach()
    }

    private mutating func setAdmin(_ admin: Bool) -> [Action] {
        guard isAdmin != admin else { return [] }
        isAdmin = admin
        return [admin ? .joinAdmins : .leaveAdmins]
    }

    /// Off the core: out of the admins' audience first, then off the bus.
    private mutating func detach() -> [Action] {
        guard isAttached, let userID else { return [] }
        isAttached = false
        let leaving: [Action] = isAdmin ? [.leaveAdmins] : []
        isAdmin = false
        return leaving + [.detach(userID: userID)]
    }
}
