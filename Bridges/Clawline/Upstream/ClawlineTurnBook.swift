import ClawlineWire
import RelayCore

/// The turns of one upstream Clawline account, as a pure state machine: it takes turns, the
/// provider's frames and clock ticks, and answers with frames to send and turn events.
///
/// A provider keeps one timeline per user, and an answer names no message it answers. So one
/// turn runs at a time (the others wait in order, up to `maxQueued`), and answers are matched by
/// position: a v1 provider answers a user's messages in the order it echoed them, so the user
/// echoes not answered yet form a queue and each assistant final answers the oldest (a stream
/// binds to its echo by the stream's id). A turn owns the echoes of the messages it sent; an
/// answer to an echo it does not own (another device's message, an abandoned one) is dropped.
///
/// - Important: v1 ends a stream when the socket that sent its message closes. So after a
///   reconnect this device's unanswered echoes are dead, and a turn that ends without its answer
///   (cancelled, timed out) asks for a fresh connection (`.resync`) rather than leave a stream
///   running whose answer would take the next turn's place.
struct ClawlineTurnBook {
    enum Action: Equatable, Sendable {
        case send(String)
        case emit(turnID: String, TurnEvent)
        /// Close the socket and connect again.
        case resync(String)
    }

    /// Everything a peer or a stuck provider could inflate is bounded here.
    struct Limits: Sendable {
        var maxQueued = 32
        var resendMillis: Int64 = 5_000
        /// A message without `ack` this long after it was first sent fails its turn.
        var ackTimeoutMillis: Int64 = 120_000
        /// An acknowledged turn without a sign of its answer for this long fails.
        var answerTimeoutMillis: Int64 = 300_000
        /// Message ids one turn may use: a message the provider lost is asked again under a new id.
        var maxAttempts = 3
        var maxEchoes = 256
        /// How long the replay `auth_result` announced may take before it counts as over.
        var replayMillis: Int64 = 10_000

        init() {}
    }

    private struct Flight {
        let turnID: String
        let text: String
        /// Sent with the text each time (inline images, as `MessageRules` takes them).
        var attachments: [JSONValue]? = nil
        var clientID: String?
        var attempts = 0
        /// When the current id was first sent (or the turn started, before that).
        var idSince: Int64
        var lastSentAt: Int64 = 0
        var acked = false
        var lastActivityAt: Int64
    }

    /// A user message in the timeline that has no answer yet.
    private struct Echo {
        let id: String
        let isMine: Bool
        var owner: String?
        var streamID: String?
    }

    /// A message this device sent whose echo has not come yet.
    private struct Sent {
        let clientID: String
        let text: String
        var owner: String?
    }

    let deviceID: String
    let limits: Limits
    private let newMessageID: () -> String
    private var waiting: [(id: String, text: String, attachments: [JSONValue]?)] = []
    private var flight: Flight?
    private var echoes: [Echo] = []
    private var sent: [Sent] = []
    private var seen = RecentIDs(capacity: 512)
    private var isUp = false
    /// Up and the replay is over: messages go out.
    private var isLive = false
    private var replayRemaining = 0
    private var replayEndsAt: Int64 = 0
    /// The provider lost our cursor: nothing in this replay is taken as ours.
    private var replayIsFresh = false

    init(deviceID: String, limits: Limits = Limits(), newMessageID: @escaping () -> String = ClientFrame.Message.newID) {
        self.deviceID = deviceID
        self.limits = limits
        self.newMessageID = newMessageID
    }

    /// Turns held: the running one and those waiting.
    var count: Int { waiting.count + (flight == nil ? 0 : 1) }
    /// True while `tick` has work: a turn, or a replay to finish.
    var needsTicks: Bool { flight != nil || !waiting.isEmpty || (isUp && !isLive) }

    mutating func start(_ id: String, text: String, attachments: [JSONValue]? = nil, now: Int64) -> [Action] {
        guard !text.isEmpty, text.utf8.count <= MessageRules.maxContentBytes else {
            return [.emit(turnID: id, .failed("a Clawline message holds 1 byte to 64 KB of text; this one has \(text.utf8.count)"))]
        }
        if let attachments, case .failure(let refusal) = MessageRules.validate(clientID: id, content: text, attachments: attachments) {
            return [.emit(turnID: id, .failed("the Clawline provider would refuse these attachments: \(refusal.message)"))]
        }
        guard count < limits.maxQueued + 1 else { return [.emit(turnID: id, .failed("\(count) turns are already waiting on this account"))] }
        waiting.append((id, text, attachments))
        return [.emit(turnID: id, .typing(true))] + promote(now: now)
    }

    /// Forgets a turn. One already sent is left to a fresh connection (v1 has no abort).
    mutating func cancel(_ id: String, now: Int64) -> [Action] {
        waiting.removeAll { $0.id == id }
        guard let current = flight, current.turnID == id else { return [] }
        return end(current, failure: nil, now: now)
    }

    mutating func linkUp(_ result: ServerFrame.AuthResult, now: Int64) -> [Action] {
        isUp = true
        isLive = false
        replayIsFresh = result.historyReset == true
        if replayIsFresh { echoes.removeAll() }
        replayRemaining = result.replayCount ?? 0
        replayEndsAt = now + limits.replayMillis
        return replayRemaining == 0 ? endReplay(now: now) : []
    }

    mutating func linkDown() {
        isUp = false
        isLive = false
        replayRemaining = 0
    }

    /// The link stopped for good: every turn fails.
    mutating func failAll(_ reason: String) -> [Action] {
        let ids = (flight.map { [$0.turnID] } ?? []) + waiting.map(\.id)
        flight = nil
        waiting.removeAll()
        return ids.map { .emit(turnID: $0, .failed(reason)) }
    }

    mutating func receive(_ frame: ServerFrame, now: Int64) -> [Action] {
        switch frame {
        case .ack(let ack):
            if flight?.clientID == ack.id, flight?.acked == false {
                flight?.acked = true
                flight?.lastActivityAt = now
            }
            return []
        case .message(let message):
            var actions = take(message, now: now)
            if isUp, !isLive, replayRemaining > 0, !message.streaming {
                replayRemaining -= 1
                if replayRemaining == 0 { actions += endReplay(now: now) }
            }
            return actions
        case .error(let error):
            guard let messageID = error.messageId else { return [] }
            return refused(code: error.code, message: error.message, messageID: messageID, now: now)
        case .typing(let typing):
            if typing.active, flight?.acked == true { flight?.lastActivityAt = now }
            return []
        case .pairResult, .pairApprovalRequest, .authResult, .userInfo, .other:
            return []
        }
    }

    /// Resends an unacknowledged message, ends a replay that overran, fails a stuck turn.
    mutating func tick(now: Int64) -> [Action] {
        var actions: [Action] = []
        if isUp, !isLive, now >= replayEndsAt { actions += endReplay(now: now) }
        guard let current = flight else { return actions }
        if !current.acked, now - current.idSince >= limits.ackTimeoutMillis {
            let seconds = limits.ackTimeoutMillis / 1000
            let failure =
                current.clientID == nil
                ? "the provider was not reachable for \(seconds) s" : "the provider did not acknowledge the message within \(seconds) s"
            return actions + end(current, failure: failure, now: now)
        }
        if current.acked, now - current.lastActivityAt >= limits.answerTimeoutMillis {
            return actions + end(current, failure: "no answer from the provider for \(limits.answerTimeoutMillis / 1000) s", now: now)
        }
        if isLive, !current.acked, current.clientID != nil, now - current.lastSentAt >= limits.resendMillis {
            actions += send(now: now, newID: false)
        }
        return actions
    }

    // MARK: Steps

    private mutating func promote(now: Int64) -> [Action] {
        guard flight == nil, !waiting.isEmpty else { return [] }
        let next = waiting.removeFirst()
        flight = Flight(turnID: next.id, text: next.text, attachments: next.attachments, idSince: now, lastActivityAt: now)
        return isLive ? send(now: now, newID: false) : []
    }

    /// Sends the running turn's message: again under its id, or under a new one.
    private mutating func send(now: Int64, newID: Bool) -> [Action] {
        guard var current = flight else { return [] }
        if newID || current.clientID == nil {
            guard current.attempts < limits.maxAttempts else {
                return end(current, failure: "the provider lost the message \(current.attempts) times", now: now)
            }
            current.clientID = newMessageID()
            current.attempts += 1
            current.acked = false
            current.idSince = now
        }
        guard let clientID = current.clientID else { return [] }
        current.lastSentAt = now
        flight = current
        if !sent.contains(where: { $0.clientID == clientID }) { sent.append(Sent(clientID: clientID, text: current.text, owner: current.turnID)) }
        return [.send(ClientFrame.message(ClientFrame.Message(id: clientID, content: current.text, attachments: current.attachments)).encoded())]
    }

    /// After a (re)connect's replay: this device's unanswered echoes are dead (v1), and the
    /// running turn goes out again: under its id if never acknowledged, else as a new message.
    private mutating func endReplay(now: Int64) -> [Action] {
        isLive = true
        replayRemaining = 0
        echoes.removeAll { $0.isMine }
        sent.removeAll()
        guard let current = flight else { return promote(now: now) }
        return send(now: now, newID: current.acked)
    }

    private mutating func take(_ message: ServerFrame.Message, now: Int64) -> [Action] {
        // On a relay provider, the admin channel's events reach admin devices too; they are not this timeline.
        guard message.channelType != .admin else { return [] }
        if !message.streaming { guard seen.insert(message.id) else { return [] } }
        switch message.role {
        case "user":
            echoed(message, now: now)
            return []
        case "assistant":
            return answered(message, now: now)
        default:
            return []
        }
    }

    private mutating func echoed(_ message: ServerFrame.Message, now: Int64) {
        let isMine = message.deviceId == deviceID
        var owner: String?
        if isMine, !(replayIsFresh && !isLive), let index = sent.firstIndex(where: { $0.text == message.content }) {
            owner = sent.remove(at: index).owner
        }
        echoes.append(Echo(id: message.id, isMine: isMine, owner: owner))
        if owner != nil, owner == flight?.turnID { flight?.lastActivityAt = now }
        while echoes.count > limits.maxEchoes, let index = echoes.firstIndex(where: { $0.owner == nil }) { echoes.remove(at: index) }
    }

    /// Assistant output: a streaming update or the final answer of the echo it belongs to.
    private mutating func answered(_ message: ServerFrame.Message, now: Int64) -> [Action] {
        guard let index = echoes.firstIndex(where: { $0.streamID == message.id }) ?? echoes.firstIndex(where: { $0.streamID == nil }) else {
            return []
        }
        let owner = echoes[index].owner
        if message.streaming {
            echoes[index].streamID = message.id
        } else {
            echoes.remove(at: index)
        }
        guard let owner, let current = flight, current.turnID == owner else { return [] }
        guard !message.streaming else {
            flight?.lastActivityAt = now
            return [.emit(turnID: owner, .progress(message.content))]
        }
        flight = nil
        return [.emit(turnID: owner, .final(message.content))] + promote(now: now)
    }

    private mutating func refused(code: String, message: String, messageID: String, now: Int64) -> [Action] {
        guard let current = flight else { return [] }
        let ownStream = echoes.contains { $0.owner == current.turnID && $0.streamID == messageID }
        guard messageID == current.clientID || ownStream else { return [] }
        switch code {
        case ClawlineErrorCode.rateLimited.rawValue where !current.acked:
            return []  // sent again at the next resend
        case ClawlineErrorCode.invalidMessage.rawValue where !current.acked:
            // The provider will not take this id (a relay says so for one whose turn failed): a new one.
            sent.removeAll { $0.clientID == messageID }
            return send(now: now, newID: true)
        default:
            // The provider is done with it (`server_error`: the answer failed; or it refused the message).
            echoes.removeAll { $0.owner == current.turnID }
            sent.removeAll { $0.owner == current.turnID }
            flight = nil
            return [.emit(turnID: current.turnID, .failed("the provider answered \(code): \(message)"))] + promote(now: now)
        }
    }

    /// Ends the running turn without its answer (failing it with `failure`, or quietly when it was
    /// cancelled); one already sent needs a fresh connection.
    private mutating func end(_ current: Flight, failure: String?, now: Int64) -> [Action] {
        flight = nil
        for index in echoes.indices where echoes[index].owner == current.turnID { echoes[index].owner = nil }
        for index in sent.indices where sent[index].owner == current.turnID { sent[index].owner = nil }
        var actions: [Action] = failure.map { [.emit(turnID: current.turnID, .failed($0))] } ?? []
        if current.clientID != nil, isUp {
            isLive = false
            actions.append(.resync("a turn ended without its answer (\(failure ?? "cancelled"))"))
        }
        return actions + promote(now: now)
    }
}
