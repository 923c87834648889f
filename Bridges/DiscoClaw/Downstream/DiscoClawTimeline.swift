import DiscoClawWire
import RelayCore

/// The pure rules of `/sync` and of paging a conversation: bounds, the cursor, what counts as
/// read and the live text of running answers.
enum DiscoClawTimeline {
    /// Rows one `/sync` returns at most; the cursor lets the next call go on.
    static let syncLimit = 1_000
    /// Message text one `/sync` or page carries at most (always at least one message): a history of
    /// large messages is answered in parts instead of one huge body.
    static let responseBudget = 4 << 20
    static let defaultPageLimit: Int64 = 50
    static let maxPageLimit: Int64 = 200

    /// A page's size: 50 when not given, within 1…200.
    static func pageLimit(_ given: Int64?) -> Int { Int(min(max(given ?? defaultPageLimit, 1), maxPageLimit)) }

    /// An integer query argument: absent or empty → nil; not a non-negative integer → `badQuery`.
    static func integer(_ name: String, _ text: String?) -> Result<Int64?, DiscoClawError> {
        guard let text, !text.isEmpty else { return .success(nil) }
        guard let value = Int64(text), value >= 0 else { return .failure(.badQuery(name: name)) }
        return .success(value)
    }

    /// Where the next `/sync` goes on from. A cut answer (by count or size) ends at its last
    /// message; otherwise the cursor is the last message's seq, or the newest conversation change
    /// (a rename alone moves it), and never goes back from `since`.
    static func cursor(since: Int64, _ batch: TimelineSync) -> Int64 {
        if batch.more, let last = batch.entries.last { return last.seq }
        let changes = batch.conversations.lazy.map(\.changeSeq).filter { $0 > since }
        return max(since, batch.entries.last?.seq ?? since, changes.max() ?? since)
    }

    /// Per conversation, the newest complete message among `entries`: the app has no read
    /// receipts, so what it fetched while in use counts as read.
    static func readMarks(_ entries: [TimelineEntry]) -> [String: Int64] {
        var newest: [String: Int64] = [:]
        for entry in entries where entry.status == .complete { newest[entry.conversationID] = max(newest[entry.conversationID] ?? 0, entry.seq) }
        return newest
    }

    /// The placeholders of answers still running, with their text so far (`running` is read only
    /// when there is a placeholder).
    static func live(_ entries: [TimelineEntry], running: () -> [TurnProgress]) -> [TimelineEntry] {
        guard entries.contains(where: { $0.status == .pending }) else { return entries }
        let byAnswer = Dictionary(running().map { ($0.eventID, $0) }, uniquingKeysWith: { first, _ in first })
        return entries.map { entry in
            guard entry.status == .pending, let progress = byAnswer[entry.id], progress.startedAt > 0 else { return entry }
            var live = entry
            live.status = .streaming
            live.content = progress.content
            return live
        }
    }
}
