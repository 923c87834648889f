import DiscoClawWire

/// The answers a sending device's socket holds back, as a value.
///
/// The app inserts an answer's row only after it has decoded the `POST` reply and written two
/// SQLite rows; until then it drops every event about the answer, yet still moves its sync cursor
/// to the event's seq. So the sender's socket holds an answer's events from the moment its message
/// is accepted until a short while after the reply is written (`release`).
///
/// An answer that ended while held may still have been missed by a slower app, so it completes with
/// its placeholder's seq and is announced again later (`announce`) with `conversation.updated`:
/// the `/sync` the app then makes returns the finished answer, whose own seq is higher. Until then
/// no event moves the app's cursor past its placeholder, so that `/sync` cannot skip it. And the
/// announcement waits until every message this socket's device sent is as old as an announcement
/// (a `/sync` returns the device's newest message too, and one the app has not yet renamed its own
/// copy of would show twice).
struct DiscoClawAnswerHolds {
    private struct Entry {
        var answerID: String
        var conversationID: String
        /// The placeholder's seq: at most what events may move the cursor to while this entry lasts.
        var seq: Int64
        var events: [DiscoClawEvent] = []
        var ended = false
        var released = false
        var announceDue = false

        /// Whether the app may still be without the answer: it is held, or it ended while held.
        var capsTheCursor: Bool { !released || ended }
    }

    /// The answers to this device's messages since the last announcement, oldest first.
    private var entries: [Entry] = []

    /// Events of `answerID` (whose placeholder has `seq`) wait until `release`.
    mutating func hold(_ answerID: String, conversationID: String, seq: Int64) {
        guard !entries.contains(where: { $0.answerID == answerID }) else { return }
        entries.append(Entry(answerID: answerID, conversationID: conversationID, seq: seq))
    }

    /// Keeps `event` if its answer is held (true); otherwise it may go now.
    mutating func keep(_ event: DiscoClawEvent, of answerID: String) -> Bool {
        guard let index = entries.firstIndex(where: { $0.answerID == answerID && !$0.released }) else { return false }
        entries[index].events.append(event)
        if case .messageComplete = event { entries[index].ended = true }
        return true
    }

    /// `event` as it may go out now: its seq no higher than the placeholder of any answer the app
    /// may still be without.
    func capped(_ event: DiscoClawEvent) -> DiscoClawEvent {
        guard let floor = entries.lazy.filter(\.capsTheCursor).map(\.seq).min() else { return event }
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

    /// The held events of `answerID`, in order, to go out now; an answer that ended completes with
    /// its placeholder's seq.
    mutating func release(_ answerID: String) -> [DiscoClawEvent] {
        guard let index = entries.firstIndex(where: { $0.answerID == answerID && !$0.released }) else { return [] }
        entries[index].released = true
        let entry = entries[index]
        entries[index].events = []
        return entry.events.map { event in
            guard case .messageComplete(var complete) = event else { return capped(event) }
            complete.seq = min(complete.seq ?? entry.seq, entry.seq)
            return capped(.messageComplete(complete))
        } + announcements()
    }

    /// `answerID`'s message is as old as an announcement: once every message's is, the answers that
    /// ended while held are announced, with one `conversation.updated` per conversation.
    mutating func announce(_ answerID: String) -> [DiscoClawEvent] {
        guard let index = entries.firstIndex(where: { $0.answerID == answerID }) else { return [] }
        entries[index].announceDue = true
        return announcements()
    }

    private mutating func announcements() -> [DiscoClawEvent] {
        guard entries.allSatisfy({ $0.released && $0.announceDue }) else { return [] }
        var conversations: [String] = []
        for entry in entries where entry.ended && !conversations.contains(entry.conversationID) { conversations.append(entry.conversationID) }
        entries = []
        return conversations.map { .conversationUpdated(DiscoClawEvent.ConversationUpdated(conversationId: $0)) }
    }
}
