import DiscoClawWire

/// The answers a sending device's socket holds back, as a value.
///
/// The app inserts an answer's row only after it has decoded the `POST` reply and written two
/// SQLite rows; until then it drops every event about the answer, yet still moves its sync cursor
/// to the event's seq. So the sender's socket holds an answer's events from the moment its message
/// is accepted until a short while after the reply is written (`release`). An answer that ended
/// while held may still have been missed by a slow app, so when released its `message.complete`
/// carries the placeholder's seq and a `conversation.updated` follows: the `/sync` the app makes
/// then returns the finished answer (which has a higher seq). While anything is held, no event
/// moves the app's cursor past the oldest held placeholder, so that `/sync` cannot skip it.
struct DiscoClawAnswerHolds {
    private struct Held {
        var answerID: String
        var conversationID: String
        /// The placeholder's seq: at most what the held answer's events may move the cursor to.
        var seq: Int64
        var events: [DiscoClawEvent] = []
        var completed = false
    }

    private var holds: [Held] = []

    var isEmpty: Bool { holds.isEmpty }

    /// Events of `answerID` (whose placeholder has `seq`) wait until `release`.
    mutating func hold(_ answerID: String, conversationID: String, seq: Int64) {
        guard !holds.contains(where: { $0.answerID == answerID }) else { return }
        holds.append(Held(answerID: answerID, conversationID: conversationID, seq: seq))
    }

    /// Keeps `event` if its answer is held (true); otherwise it may go now.
    mutating func keep(_ event: DiscoClawEvent, of answerID: String) -> Bool {
        guard let index = holds.firstIndex(where: { $0.answerID == answerID }) else { return false }
        holds[index].events.append(event)
        if case .messageComplete = event { holds[index].completed = true }
        return true
    }

    /// `event` as it may go out now: its seq no higher than the oldest held placeholder's.
    func capped(_ event: DiscoClawEvent) -> DiscoClawEvent {
        guard let floor = holds.lazy.map(\.seq).min() else { return event }
        switch event {
        case .messageDelta(var delta) where (delta.seq ?? 0) > floor:
            delta.seq = floor
            return .messageDelta(delta)
        case .messageComplete(var complete) where (complete.seq ?? 0) > floor:
            complete.seq = floor
            return .messageComplete(complete)
        default:
            return event
        }
    }

    /// The held events of `answerID`, in order, to go out now; an answer that ended while held
    /// completes with its placeholder's seq and is announced again with `conversation.updated`.
    mutating func release(_ answerID: String) -> [DiscoClawEvent] {
        guard let index = holds.firstIndex(where: { $0.answerID == answerID }) else { return [] }
        let held = holds.remove(at: index)
        var due = held.events.map { event in
            guard case .messageComplete(var complete) = event else { return capped(event) }
            complete.seq = min(complete.seq ?? held.seq, held.seq)
            return capped(.messageComplete(complete))
        }
        if held.completed { due.append(.conversationUpdated(DiscoClawEvent.ConversationUpdated(conversationId: held.conversationID))) }
        return due
    }
}
