/// Lines sent from one buffer, recalled with Up and Down.
///
/// Going up first keeps the line being typed as a draft; going down past the newest entry brings
/// it back. A recalled line can be edited and sent; the edit does not change the stored entry.
public struct InputHistory: Sendable, Equatable {
    /// Oldest first.
    public private(set) var entries: [String] = []
    public let capacity: Int
    private var position: Int?
    private var draft = ""

    public init(capacity: Int = 100) {
        self.capacity = max(1, capacity)
    }

    /// Whether Up has recalled an entry and Down has not yet come back to the draft.
    public var isBrowsing: Bool { position != nil }

    /// Remembers a sent line (not an empty one, not the newest one again) and stops browsing.
    public mutating func record(_ text: String) {
        position = nil
        draft = ""
        guard !text.isEmpty, entries.last != text else { return }
        entries.append(text)
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
    }

    /// The entry before the one shown (`current` is kept as the draft when browsing starts), or
    /// `nil` at the oldest.
    public mutating func older(current: String) -> String? {
        let next = (position ?? entries.count) - 1
        guard next >= 0 else { return nil }
        if position == nil { draft = current }
        position = next
        return entries[next]
    }

    /// The entry after the one shown, the draft after the newest, or `nil` when not browsing.
    public mutating func newer() -> String? {
        guard let position else { return nil }
        if position + 1 < entries.count {
            self.position = position + 1
            return entries[position + 1]
        }
        self.position = nil
        return draft
    }
}
