/// Incremental search backwards through the active buffer (Ctrl-R, `/search TEXT`).
///
/// Typing extends the query and keeps the current match if it still matches, else looks further
/// back; Ctrl-R finds the next older match; Backspace shortens the query and searches again from the
/// newest line. Enter ends the search where it is; Escape, Ctrl-G or Ctrl-C end it and scroll back to
/// where it began. Any other key ends the search and then acts as usual. Matching ignores case.
public struct SearchState: Equatable, Sendable {
    public var query: String
    /// The line found (its rows are drawn as ``RowStyle/searchMatch``).
    public var matchID: String?
    /// The query matches nothing (from where the search looked).
    public var failed: Bool
    var startOffset: Int
}

extension ChatState {
    mutating func beginSearch(query: String) {
        guard let buffer = activeBuffer else { return show(notice: "no conversation to search") }
        search = SearchState(query: query, matchID: nil, failed: false, startOffset: buffer.scrollOffset)
        needsRedraw = true
        if !query.isEmpty { findMatch(includingCurrent: true) }
    }

    /// Handles a key while searching; `false` when the key ended the search and must act as usual.
    mutating func handleSearchKey(_ key: Key) -> Bool {
        guard var state = search else { return false }
        needsRedraw = true
        switch (key.code, key.modifiers) {
        case (.character, []), (.character, .shift), (.paste, _):
            if case .paste(let text) = key.code {
                state.query += text.prefix { $0 != "\n" }
            } else if let character = key.printable {
                state.query.append(character)
            }
            search = state
            findMatch(includingCurrent: true)
        case (.backspace, []):
            guard !state.query.isEmpty else { return true }
            state.query.removeLast()
            state.matchID = nil
            search = state
            findMatch(includingCurrent: true)
        case (.character("r"), .control):
            findMatch(includingCurrent: false)
        case (.enter, []):
            search = nil
        case (.escape, _), (.character("g"), .control), (.character("c"), .control):
            if let key = activeKey { buffers.update(key) { $0.scrollOffset = state.startOffset } }
            search = nil
        default:
            search = nil
            return false
        }
        return true
    }

    private mutating func findMatch(includingCurrent: Bool) {
        guard var state = search, let key = activeKey, let buffer = activeBuffer else { return }
        let query = state.query.lowercased()
        guard !query.isEmpty else {
            state.failed = false
            search = state
            return
        }
        let lines = buffer.lines
        let current = state.matchID.flatMap { id in lines.firstIndex { $0.id == id } }
        let start = current.map { includingCurrent ? $0 : $0 - 1 } ?? lines.count - 1
        let found = start < 0 ? nil : stride(from: start, through: 0, by: -1).first { lines[$0].text.lowercased().contains(query) }
        if let found {
            state.matchID = lines[found].id
            state.failed = false
            search = state
            scroll(toLine: lines[found].id, in: key)
        } else {
            state.failed = true
            search = state
        }
    }

    /// Scrolls so the line's last row is at the bottom of the view (its first row at the top when it is taller).
    private mutating func scroll(toLine id: String, in key: String) {
        guard let buffer = buffers[key], let height = conversationHeight, height > 0 else { return }
        let rows = conversationRows(of: buffer)
        guard let first = rows.firstIndex(where: { $0.lineID == id }), let last = rows.lastIndex(where: { $0.lineID == id }) else { return }
        let bottom = last - first + 1 > height ? first + height : last + 1
        let top = max(0, rows.count - height)
        buffers.update(key) { $0.scrollOffset = max(0, min(top, rows.count - bottom)) }
    }
}
