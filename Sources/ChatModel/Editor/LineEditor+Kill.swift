/// Killing into the ``KillRing`` and yanking back.
///
/// Ctrl-K kills to the end of the logical line (at its end, the newline), Ctrl-U to its start (at
/// its start, the newline before), Ctrl-W the whitespace-separated word before the cursor, Alt-D the
/// word after it, Alt-Backspace the word before it. Ctrl-Y yanks the newest kill; Alt-Y right after
/// a yank swaps it for the kill before.
extension LineEditor {
    mutating func handleKill(_ key: Key, killRing: inout KillRing, previous: LastAction) -> Outcome? {
        let end = lineEnd(at: cursor)
        let start = lineStart(at: cursor)
        switch (key.code, key.modifiers) {
        case (.character("k"), .control):
            kill(cursor..<(end > cursor ? end : min(characters.count, cursor + 1)), before: false, killRing: &killRing, previous: previous)
        case (.character("u"), .control):
            kill((start < cursor ? start : max(0, cursor - 1))..<cursor, before: true, killRing: &killRing, previous: previous)
        case (.character("w"), .control):
            kill(whitespaceWordStart(before: cursor)..<cursor, before: true, killRing: &killRing, previous: previous)
        case (.character("d"), .alt):
            kill(cursor..<wordEnd(after: cursor), before: false, killRing: &killRing, previous: previous)
        case (.backspace, .alt), (.character("h"), [.control, .alt]):
            kill(wordStart(before: cursor)..<cursor, before: true, killRing: &killRing, previous: previous)
        case (.character("y"), .control):
            yank(killRing.entry(back: 0), back: 0)
        case (.character("y"), .alt):
            guard case .yank(let range, let back) = previous, range.upperBound == cursor else { return .edited }
            cursor = range.lowerBound
            characters.removeSubrange(range)
            yank(killRing.entry(back: back + 1), back: back + 1)
        default:
            return nil
        }
        return .edited
    }

    private mutating func kill(_ range: Range<Int>, before: Bool, killRing: inout KillRing, previous: LastAction) {
        guard !range.isEmpty else {
            if previous == .kill { lastAction = .kill }
            return
        }
        killRing.kill(String(characters[range]), combine: previous == .kill, before: before)
        replace(range, with: "")
        lastAction = .kill
    }

    private mutating func yank(_ text: String?, back: Int) {
        guard let text else { return }
        let start = cursor
        insert(text)
        lastAction = .yank(range: start..<cursor, back: back)
    }
}
