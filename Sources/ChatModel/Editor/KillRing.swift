/// Text removed by the kill keys (Ctrl-K/U/W, Alt-D, Alt-Backspace), for Ctrl-Y and Alt-Y.
///
/// One ring for all buffers, as in Emacs: kill in one conversation, yank in another. Kills that
/// follow each other without another key in between grow one entry instead of adding one.
public struct KillRing: Sendable, Equatable {
    /// Oldest first; the newest is what Ctrl-Y yanks.
    public private(set) var entries: [String] = []
    public let capacity: Int

    public init(capacity: Int = 16) {
        self.capacity = max(1, capacity)
    }

    /// Records killed text. `combine` merges it into the newest entry (the key before was a kill
    /// too), in front of it when `before` (a backward kill), after it otherwise.
    public mutating func kill(_ text: String, combine: Bool, before: Bool) {
        guard !text.isEmpty else { return }
        if combine, let newest = entries.popLast() {
            entries.append(before ? text + newest : newest + text)
            return
        }
        entries.append(text)
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
    }

    /// The entry `back` kills before the newest (0 is the newest), cycling round the ring.
    public func entry(back: Int) -> String? {
        guard !entries.isEmpty else { return nil }
        let count = entries.count
        return entries[count - 1 - ((back % count) + count) % count]
    }
}
