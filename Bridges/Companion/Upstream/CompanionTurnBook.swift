import CompanionWire
import RelayCore

/// The turns of one Companion link and the sessions they run in, as a pure state machine: it takes
/// turns, server frames and clock ticks, and answers with frames to send and turn events.
///
/// A turn first needs its working directory's session (`streamStart`, once per directory, then
/// cached), then runs as a `claudeCommand`. Chunks carry no request id, so a session's chunks go
/// to its oldest running turn: the server runs one session's commands in order.
struct CompanionTurnBook {
    enum Action: Equatable, Sendable {
        case send(String)
        case emit(turnID: String, TurnEvent)
    }

    /// Everything a peer could inflate is bounded here.
    struct Limits: Sendable {
        /// Turns held at once: running, waiting for a session, or cancelled but still running upstream.
        var maxTurns = 64
        var maxSessions = 32
        var sessionIdleMillis: Int64 = 10 * 60 * 1000
        /// An unanswered `streamStart` fails the turns waiting for it after this long.
        var sessionStartMillis: Int64 = 30_000
        /// How long a cancelled turn's command still claims its session's chunks.
        var forgottenMillis: Int64 = 10 * 60 * 1000
        var maxTextBytes = CompanionTranscript.defaultMaxBytes

        init() {}
    }

    private enum Phase: Equatable {
        case awaitingSession
        case running(sessionID: String, requestID: String)
    }

    private struct Turn {
        let directory: String?
        let text: String
        /// Start order while waiting for a session, command order once running.
        var order: Int
        var phase = Phase.awaitingSession
        var transcript: CompanionTranscript
        var hasRestartedSession = false
        /// Cancelled: its events are dropped, but its command may still run upstream.
        var forgottenAt: Int64?
    }

    private struct SessionStart {
        let requestID: String
        let sentAt: Int64
    }

    /// What the app subscribes to, plus the events the relay reads; servers do not filter by it.
    static let subscribedEvents = [
        "streamData", "streamComplete", "toolUse", "toolResult", "assistantMessage", "streamChunk", "conversationResult", "error",
    ]

    let limits: Limits
    private let newRequestID: () -> String
    private var turns: [String: Turn] = [:]
    /// `streamStart`s in flight, by directory key.
    private var starts: [String: SessionStart] = [:]
    private var sessions: CompanionSessionCache
    /// Sessions this connection subscribed to.
    private var subscribed: Set<String> = []
    private var nextOrder = 0

    init(limits: Limits = Limits(), newRequestID: @escaping () -> String = Identifiers.newUUID) {
        self.limits = limits
        self.newRequestID = newRequestID
        sessions = CompanionSessionCache(capacity: limits.maxSessions, idleMillis: limits.sessionIdleMillis)
    }

    /// Turns held, cancelled ones still running upstream included.
    var count: Int { turns.count }

    /// Starts a turn under a new, unique `id`.
    mutating func start(_ id: String, text: String, directory: String?, now: Int64) -> [Action] {
        guard turns.count < limits.maxTurns else {
            return [.emit(turnID: id, .failed("\(turns.count) turns are already waiting on this server"))]
        }
        let directory = directory?.isEmpty == true ? nil : directory
        let order = takeOrder()
        turns[id] = Turn(directory: directory, text: text, order: order, transcript: CompanionTranscript(maxBytes: limits.maxTextBytes))
        return [.emit(turnID: id, .typing(true))] + run(id, now: now)
    }

    /// Forgets a turn: nothing more is emitted for it (the protocol has no abort).
    mutating func cancel(_ id: String, now: Int64) {
        guard let turn = turns[id] else { return }
        if turn.phase == .awaitingSession {
            turns[id] = nil
        } else if turn.forgottenAt == nil {
            turns[id]?.forgottenAt = now
        }
    }

    mutating func receive(_ frame: CompanionServerEvent, now: Int64) -> [Action] {
        switch frame {
        case .sessionStarted(let requestID, let sessionID): sessionStarted(requestID: requestID, sessionID: sessionID, now: now)
        case .chunk(let chunk, let queued): queued ? [] : progress(chunk)
        case .response(let requestID, let response): respond(requestID: requestID, response)
        case .error(let requestID, let code, let message): refused(requestID: requestID, code: code, message: message, now: now)
        case .welcome, .pong, .other: []
        }
    }

    /// The connection is gone: every live turn fails, and the next connection starts afresh.
    mutating func linkDown(reason: String) -> [Action] {
        let live = turns.filter { $0.value.forgottenAt == nil }.sorted { $0.value.order < $1.value.order }
        turns.removeAll()
        starts.removeAll()
        subscribed.removeAll()
        sessions.removeAll()
        return live.map { .emit(turnID: $0.key, .failed(reason)) }
    }

    /// Fails turns whose `streamStart` went unanswered; drops cancelled turns kept too long.
    mutating func expire(now: Int64) -> [Action] {
        var actions: [Action] = []
        for (key, start) in starts where now - start.sentAt >= limits.sessionStartMillis {
            starts[key] = nil
            actions += failWaiting(key, "the server did not answer streamStart within \(limits.sessionStartMillis / 1000) s")
        }
        for (id, turn) in turns {
            if let forgottenAt = turn.forgottenAt, now - forgottenAt >= limits.forgottenMillis { turns[id] = nil }
        }
        return actions
    }

    // MARK: Steps

    private mutating func takeOrder() -> Int {
        nextOrder += 1
        return nextOrder
    }

    /// Sends the turn's command in its directory's session, or asks for that session first.
    private mutating func run(_ id: String, now: Int64) -> [Action] {
        guard let turn = turns[id] else { return [] }
        guard let sessionID = sessions.sessionID(for: turn.directory, now: now) else { return startSession(turn.directory, now: now) }
        var actions: [Action] = []
        if subscribed.insert(sessionID).inserted {
            let subscribe = Subscribe(events: Self.subscribedEvents, sessionIds: [sessionID])
            actions.append(.send(CompanionFrame(subscribe, requestID: newRequestID(), at: now).encoded()))
        }
        let requestID = newRequestID()
        turns[id]?.phase = .running(sessionID: sessionID, requestID: requestID)
        let order = takeOrder()
        turns[id]?.order = order
        let command = ClaudeCommand(command: turn.text, projectPath: turn.directory, sessionId: sessionID)
        actions.append(.send(CompanionFrame(command, requestID: requestID, at: now).encoded()))
        return actions
    }

    private mutating func startSession(_ directory: String?, now: Int64) -> [Action] {
        let key = CompanionSessionCache.key(directory)
        guard starts[key] == nil else { return [] }
        let requestID = newRequestID()
        starts[key] = SessionStart(requestID: requestID, sentAt: now)
        // A session of our own id: a relay adopts it (or answers with the directory's session), and
        // the real server needs one.
        let start = StreamStart(sessionId: Identifiers.newUUID(), workingDirectory: directory)
        return [.send(CompanionFrame(start, requestID: requestID, at: now).encoded())]
    }

    private mutating func sessionStarted(requestID: String?, sessionID: String?, now: Int64) -> [Action] {
        guard let key = starts.first(where: { $0.value.requestID == requestID })?.key else { return [] }
        starts[key] = nil
        guard let sessionID, !sessionID.isEmpty else { return failWaiting(key, "the server started a session without an id") }
        sessions.store(sessionID, for: key == CompanionSessionCache.noDirectory ? nil : key, now: now)
        return waiting(key).flatMap { run($0, now: now) }
    }

    /// A live chunk (a queued one is output of an earlier connection's turn) of a session's oldest running turn.
    private mutating func progress(_ chunk: StreamChunk) -> [Action] {
        guard let id = oldestRunning(in: chunk.sessionId), turns[id]?.forgottenAt == nil,
            let text = turns[id]?.transcript.append(type: chunk.chunk.type, content: chunk.chunk.content)
        else { return [] }
        return [.emit(turnID: id, .progress(text))]
    }

    private mutating func respond(requestID: String?, _ response: ClaudeResponse) -> [Action] {
        guard let id = running(requestID: requestID), let turn = turns.removeValue(forKey: id), turn.forgottenAt == nil else { return [] }
        guard response.success else { return [.emit(turnID: id, .failed(response.error ?? "the server reported a failure without a reason"))] }
        return [.emit(turnID: id, .final(response.content.isEmpty ? turn.transcript.text : response.content))]
    }

    private mutating func refused(requestID: String?, code: String, message: String, now: Int64) -> [Action] {
        if let key = starts.first(where: { $0.value.requestID == requestID })?.key {
            starts[key] = nil
            return failWaiting(key, "the server could not start a session: \(message) (\(code))")
        }
        guard let id = running(requestID: requestID), let turn = turns[id] else { return [] }
        if code == CompanionErrorCode.invalidSession.rawValue, !turn.hasRestartedSession, turn.forgottenAt == nil,
            case .running(let sessionID, _) = turn.phase
        {
            sessions.remove(sessionID, for: turn.directory)
            subscribed.remove(sessionID)
            turns[id]?.hasRestartedSession = true
            turns[id]?.phase = .awaitingSession
            return run(id, now: now)
        }
        turns[id] = nil
        return turn.forgottenAt == nil ? [.emit(turnID: id, .failed("\(message) (\(code))"))] : []
    }

    // MARK: Lookups

    private mutating func failWaiting(_ key: String, _ reason: String) -> [Action] {
        waiting(key).map { id in
            turns[id] = nil
            return .emit(turnID: id, .failed(reason))
        }
    }

    /// Turns waiting for the session of a directory key, oldest first.
    private func waiting(_ key: String) -> [String] {
        turns.filter { $0.value.phase == .awaitingSession && CompanionSessionCache.key($0.value.directory) == key }
            .sorted { $0.value.order < $1.value.order }.map(\.key)
    }

    private func running(requestID: String?) -> String? {
        guard let requestID else { return nil }
        return turns.first { if case .running(_, requestID) = $0.value.phase { true } else { false } }?.key
    }

    private func oldestRunning(in sessionID: String) -> String? {
        turns.filter { if case .running(sessionID, _) = $0.value.phase { true } else { false } }.min { $0.value.order < $1.value.order }?.key
    }
}
