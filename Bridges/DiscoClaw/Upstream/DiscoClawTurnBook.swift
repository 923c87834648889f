import DiscoClawWire
import RelayCore

/// The turn bookkeeping of one DiscoClaw upstream account (the answers it waits for), as a pure state machine: it takes the
/// `POST` replies, WebSocket events and catch-up `/sync` pages, and answers with turn events.
///
/// Deltas are fragments that concatenate to the answer, except the first one a new socket gets
/// for a running answer: the server sends all of the text so far then, so it replaces. Events
/// may beat their turn's `POST` reply (another connection); they wait here, bounded and briefly.
/// The cursor is the highest seq heard; after a reconnect, a `/sync` from the oldest waiting
/// turn's message recovers answers that completed or failed while the socket was down.
struct DiscoClawTurnBook {
    typealias Event = DiscoClawEvent

    struct Action: Equatable, Sendable {
        var turnID: String
        var event: TurnEvent
    }

    /// Everything a server could inflate is bounded here.
    struct Limits: Sendable {
        /// Turns in flight at once; the next one fails at once.
        var maxTurns = 32
        /// Events held for answers no `POST` reply named yet.
        var maxBufferedEvents = 256
        var bufferMillis: Int64 = 15_000
        /// An answer's text stops growing past this (UTF-8 bytes); its final still comes whole.
        var maxAnswerBytes = 4 << 20
        /// Answers remembered as done, so their late events are dropped rather than held.
        var rememberedFinished = 256

        init() {}
    }

    private struct Turn {
        var answerID: String?
        var userSeq: Int64?
        var text = ""
    }

    private struct Held {
        var event: Event
        /// The first delta of its answer on its socket: the whole text so far.
        var replaces: Bool
        var at: Int64
    }

    let limits: Limits
    private var turns: [String: Turn] = [:]
    private var byAnswer: [String: String] = [:]
    private var held: [Held] = []
    /// Answers that had a delta on the current socket.
    private var streamed: Set<String> = []
    private var finished: [String] = []
    private var finishedSet: Set<String> = []
    /// The highest seq heard from the server.
    private(set) var cursor: Int64?

    init(limits: Limits = Limits()) { self.limits = limits }

    var count: Int { turns.count }
    var heldCount: Int { held.count }

    /// Takes a new turn; false when `maxTurns` are already in flight.
    mutating func admit(_ id: String) -> Bool {
        guard turns[id] == nil else { return true }
        guard turns.count < limits.maxTurns else { return false }
        turns[id] = Turn()
        return true
    }

    func contains(_ id: String) -> Bool { turns[id] != nil }

    /// The server took the turn's message; its answer is `answerID`. Events that came first apply now.
    mutating func posted(_ id: String, answerID: String, userSeq: Int64?, now: Int64) -> [Action] {
        guard turns[id] != nil, turns[id]?.answerID == nil else { return [] }
        turns[id]?.answerID = answerID
        turns[id]?.userSeq = userSeq
        byAnswer[answerID] = id
        raise(userSeq)
        expire(now: now)
        let (due, rest) = (held.filter { $0.event.answerID == answerID }, held.filter { $0.event.answerID != answerID })
        held = rest
        return due.flatMap { apply($0.event, replaces: $0.replaces, to: id) }
    }

    /// The turn ends without an answer from here (cancelled, or its message never got through).
    mutating func forget(_ id: String) {
        guard let turn = turns.removeValue(forKey: id), let answerID = turn.answerID else { return }
        byAnswer[answerID] = nil
        streamed.remove(answerID)
        remember(answerID)
    }

    /// A new socket: its first delta of each running answer is the whole text so far.
    mutating func socketOpened() { streamed.removeAll() }

    mutating func receive(_ event: Event, now: Int64) -> [Action] {
        guard let answerID = event.answerID else { return [] }
        raise(event.seq)
        let replaces = event.isDelta ? streamed.insert(answerID).inserted : false
        if let id = byAnswer[answerID] { return apply(event, replaces: replaces, to: id) }
        guard !finishedSet.contains(answerID) else { return [] }
        expire(now: now)
        if held.count >= limits.maxBufferedEvents { held.removeFirst() }
        held.append(Held(event: event, replaces: replaces, at: now))
        return []
    }

    /// Drops held events nobody claimed in time.
    mutating func expire(now: Int64) {
        held.removeAll { now - $0.at > limits.bufferMillis }
    }

    /// Where a catch-up `/sync` starts: nil when no turn waits for an answer it was promised.
    var catchUpSince: Int64? {
        let waiting = turns.values.filter { $0.answerID != nil }
        guard !waiting.isEmpty else { return nil }
        return ([cursor] + waiting.map(\.userSeq)).compactMap { $0 }.min() ?? 0
    }

    /// A `/sync` page: answers now `complete` or `error` end their turns; running ones keep
    /// waiting for the socket (its first delta brings their text).
    mutating func caughtUp(_ page: DiscoClawSyncPage) -> [Action] {
        raise(page.cursor)
        var actions: [Action] = []
        for message in page.messages {
            guard let id = byAnswer[message.id] else { continue }
            switch message.status {
            case "complete": actions += finish(id, .final(message.content))
            case "error": actions += finish(id, .failed(message.error ?? "the answer failed upstream"))
            default: break
            }
        }
        return actions
    }

    // MARK: Steps

    private mutating func apply(_ event: Event, replaces: Bool, to id: String) -> [Action] {
        guard let turn = turns[id] else { return [] }
        switch event {
        case .messageDelta(let delta):
            let grown = replaces ? delta.delta : turn.text + delta.delta
            guard grown != turn.text, grown.utf8.count <= limits.maxAnswerBytes else { return [] }
            turns[id]?.text = grown
            return [Action(turnID: id, event: .progress(grown))]
        case .messageComplete(let complete):
            return finish(id, .final(complete.content))
        case .messageError(let error):
            return finish(id, .failed(error.error))
        case .toolStart, .toolEnd, .conversationUpdated, .other:
            return []
        }
    }

    private mutating func finish(_ id: String, _ event: TurnEvent) -> [Action] {
        forget(id)
        return [Action(turnID: id, event: event)]
    }

    private mutating func remember(_ answerID: String) {
        guard finishedSet.insert(answerID).inserted else { return }
        finished.append(answerID)
        if finished.count > limits.rememberedFinished { finishedSet.remove(finished.removeFirst()) }
    }

    private mutating func raise(_ seq: Int64?) {
        guard let seq else { return }
        cursor = max(cursor ?? seq, seq)
    }
}

extension DiscoClawEvent {
    /// The answer an answer event is about (tool events are not followed upstream).
    var answerID: String? {
        switch self {
        case .messageDelta(let delta): delta.messageId
        case .messageComplete(let complete): complete.messageId
        case .messageError(let error): error.messageId
        case .toolStart, .toolEnd, .conversationUpdated, .other: nil
        }
    }

    var seq: Int64? {
        switch self {
        case .messageDelta(let delta): delta.seq
        case .messageComplete(let complete): complete.seq
        case .messageError, .toolStart, .toolEnd, .conversationUpdated, .other: nil
        }
    }

    var isDelta: Bool { if case .messageDelta = self { true } else { false } }
}
