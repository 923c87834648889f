import CompanionWire
import RelayCore

/// One Companion socket's protocol, as a value: whether it may speak, what each frame it sends
/// leads to, the sessions it holds and where it works. Its methods take an input and return
/// effects; `CompanionDownstream` performs them (the core's calls, sessions shared by every
/// socket) and comes back with `hold`, `release` and the reply builders.
struct CompanionSocketMachine {
    enum Phase: Equatable {
        /// Upgraded; the token is not checked yet.
        case opening
        case open
        case closed
    }

    enum Effect: Equatable {
        case send(String)
        case close(CompanionClose)
        /// Take the socket in: its device and user on the connection, the sessions it inherits claimed.
        case admit
        /// Record the device (first time seen) and attach the socket to the core (queued events may follow).
        case attach
        /// The socket is gone: detach it, keep the sessions it held for a reconnect.
        case detach(held: Set<String>)
        /// The device uses the app again: it is foreground, and the sessions this socket holds leave the background.
        case foreground(held: Set<String>)
        /// `client_backgrounding`, `sessionBackgrounded`, `sessionForegrounded`.
        case presence(SessionPresence)
        /// Find the sessions, hold the ones that exist, reply `subscribed`, then drain the queue.
        case subscribe(Subscribe, requestID: String?)
        case turn(CompanionTurnRequest)
        /// `streamClose`: the socket lets the session go.
        case release(sessionID: String)
        case registerPush(token: String, platform: String, requestID: String?)
        /// `permission`: decide `shown`, the prompt the socket showed when the answer arrived (else
        /// the session's oldest pending approval), then show the next.
        case permission(PermissionAnswer, choice: PermissionChoice, shown: Approval?, requestID: String?)
        /// A `registerDevice` whose token is not an APNs token (its length, for the log).
        case rejectedPushTarget(length: Int)
    }

    let deviceID: String
    /// The `clientId` of its `welcome`.
    let clientID: String
    let maxSessions: Int
    /// The version of Claude Code behind the default backend, for `welcome`.
    let agentVersion: String?
    let projects: CompanionProjects
    private(set) var phase = Phase.opening
    /// The conversations of the sessions it holds: it hears them live.
    private(set) var held: Set<String>
    /// Where `ask`/`streamStart` without a directory work (`setWorkingDirectory`).
    private(set) var workingDirectory: String?
    private(set) var renderer: CompanionRenderer
    /// The permission prompt the app shows.
    private(set) var prompts = CompanionPrompts()

    /// `held`: the sessions the device's last socket held, when it reconnects within the grace.
    init(
        deviceID: String,
        clientID: String,
        maxSessions: Int,
        agentVersion: String? = nil,
        projects: CompanionProjects,
        held: Set<String> = []
    ) {
        self.deviceID = deviceID
        self.clientID = clientID
        self.maxSessions = maxSessions
        self.agentVersion = agentVersion
        self.projects = projects
        self.held = held
        renderer = CompanionRenderer(deviceID: deviceID)
    }

    // MARK: Inputs

    /// The upgrade finished; `authorized` says whether it presented the listener's token.
    mutating func opened(authorized: Bool, revoked: Bool = false, now: Int64) -> [Effect] {
        guard phase == .opening else { return [] }
        guard authorized, !revoked else {
            phase = .closed
            return [.close(authorized ? .deviceRevoked : .authenticationRequired)]
        }
        phase = .open
        let welcome = Welcome(clientId: clientID, maxSessions: maxSessions, claudeCodeVersion: agentVersion)
        return [.admit, .send(CompanionFrame(welcome, at: now).encoded()), .attach]
    }

    /// A text (or binary) frame; `deviceInBackground` is the device's presence now.
    mutating func received(_ bytes: [UInt8], now: Int64, deviceInBackground: Bool) -> [Effect] {
        guard phase == .open else { return [] }
        let request: CompanionRequest
        switch CompanionRequest.parse(bytes) {
        case .failure(let error): return [.send(Self.error(error, requestID: nil, now: now))]
        case .success(let parsed): request = parsed
        }
        // The app never says it is back: whatever it sends next means it is.
        var effects: [Effect] = []
        if deviceInBackground, !CompanionClientFrame.isBackgroundSignal(request.type) { effects.append(.foreground(held: held)) }
        switch CompanionClientFrame.decode(request) {
        case .success(let frame):
            effects += handle(frame, requestID: request.requestID, now: now)
        case .failure(let error) where request.type == ClaudeCommand.type:
            // A claudeCommand is never answered with an error frame: the app would wait for its reply.
            let reply = ClaudeResponse.failure(error.message, sessionID: request.data.string("sessionId"))
            effects.append(.send(CompanionFrame(reply, requestID: request.requestID ?? Identifiers.newUUID(), at: now).encoded()))
        case .failure(let error):
            effects.append(.send(Self.error(error, requestID: request.requestID, now: now)))
        }
        return effects
    }

    /// The socket closed, from either side.
    /// The device was revoked while connected: the socket closes (and is detached when it has).
    func revoked() -> [Effect] { phase == .open ? [.close(.deviceRevoked)] : [] }

    mutating func closed() -> [Effect] {
        guard phase == .open else {
            phase = .closed
            return []
        }
        phase = .closed
        return [.detach(held: held)]
    }

    /// The socket takes the conversation's events live from now on.
    mutating func hold(_ conversationID: String) { held.insert(conversationID) }

    /// The socket lets the conversation go: its events wait in the device's queue.
    mutating func release(_ conversationID: String) { held.remove(conversationID) }

    /// A core event as this socket's frames.
    mutating func render(_ event: BusEvent, sessionID: String, now: Int64, queuedAt: Int64?) -> [String] {
        renderer.render(event, sessionID: sessionID, now: now, queuedAt: queuedAt)
    }

    /// The `permissionRequest` to send on `occasion`, given the pending approvals of the sessions
    /// the socket holds (oldest first); nil when there is none to send.
    mutating func prompt(_ occasion: CompanionPrompts.Occasion, pending: [CompanionPrompts.Pending], now: Int64) -> String? {
        prompts.next(occasion, pending: pending).map { CompanionFrame(CompanionPrompts.request($0, now: now), at: now).encoded() }
    }

    // MARK: Requests

    private mutating func handle(_ frame: CompanionClientFrame, requestID: String?, now: Int64) -> [Effect] {
        switch frame {
        case .ping(let ping):
            let pong = Pong(serverTime: CompanionTimestamp.string(now), clientTimestamp: ping.timestamp)
            return [.send(CompanionFrame(pong, requestID: requestID, at: now).encoded())]
        case .subscribe(let subscribe):
            return [.subscribe(subscribe, requestID: requestID)]
        case .claudeCommand(let command):
            let id = requestID ?? Identifiers.newUUID()
            return [.turn(turn(.command(requestID: id), .command(requestID: id), command.command, command.sessionId, command.projectPath))]
        case .ask(let ask):
            let id = requestID ?? Identifiers.newUUID()
            return [.turn(turn(.ask(requestID: id), .ask(requestID: id), ask.prompt, ask.sessionId, ask.workingDirectory))]
        case .streamStart(let start):
            let kind = CompanionTurnRequest.Kind.streamStart(requestID: requestID, initialPrompt: start.initialPrompt)
            return [.turn(turn(kind, .stream, start.text, start.sessionId, start.workingDirectory, streamID: requestID))]
        case .streamSend(let send):
            return [.turn(turn(.streamSend(requestID: requestID), .stream, send.prompt, send.sessionId, nil, streamID: requestID))]
        case .streamClose(let close):
            return [.release(sessionID: close.sessionId)]
        case .setWorkingDirectory(let set):
            do throws(CompanionError) {
                let place = try projects.directory(set.workingDirectory)
                workingDirectory = place
                return [.send(CompanionFrame(WorkingDirectorySet(workingDirectory: place), requestID: requestID, at: now).encoded())]
            } catch {
                return [.send(Self.error(error, requestID: requestID, now: now))]
            }
        case .registerDevice(let register):
            guard let token = register.apnsToken, PushTarget.isAPNsToken(token) else {
                let refusal = CompanionError.invalid("deviceToken must be the device's APNs token in hex")
                return [.rejectedPushTarget(length: register.apnsToken?.utf8.count ?? 0), .send(Self.error(refusal, requestID: requestID, now: now))]
            }
            return [.registerPush(token: token.lowercased(), platform: String(register.platformName.prefix(32)), requestID: requestID)]
        case .presence(let presence):
            return [.presence(presence)]
        case .permission(let answer):
            guard let choice = answer.choice else {
                return [.send(Self.error(PermissionAnswer.unknownResponse(sessionID: answer.sessionId), requestID: requestID, now: now))]
            }
            return [.permission(answer, choice: choice, shown: prompts.shown, requestID: requestID)]
        }
    }

    private func turn(
        _ kind: CompanionTurnRequest.Kind,
        _ origin: CompanionOrigin,
        _ text: String?,
        _ sessionID: String?,
        _ directory: String?,
        streamID: String? = nil
    ) -> CompanionTurnRequest {
        CompanionTurnRequest(
            kind: kind,
            text: text,
            sessionID: sessionID,
            directory: directory,
            fallbackDirectory: workingDirectory,
            clientID: origin.clientID(streamID: streamID ?? Identifiers.newUUID())
        )
    }

    // MARK: Replies

    /// A reply to the request `requestID`.
    static func reply(_ payload: some CompanionPayload, requestID: String?, now: Int64) -> String {
        CompanionFrame(payload, requestID: requestID, at: now).encoded()
    }

    /// An error frame in both forms (the real server's `error` and the app's `data`).
    static func error(_ error: CompanionError, requestID: String?, now: Int64) -> String {
        CompanionFrame(error.data, requestID: requestID, at: now, error: error.envelope).encoded()
    }
}
