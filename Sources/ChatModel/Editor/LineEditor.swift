/// The input line: readline/Emacs editing of one (possibly multi-line) message.
///
/// Text is kept as graphemes; the cursor is a grapheme index, so it never lands inside an emoji or
/// a letter with its accents. Typing a combining mark after a letter joins that letter.
/// Each buffer owns one editor (its draft and ``history`` stay with the buffer); the ``KillRing``
/// is shared and passed in.
public struct LineEditor: Sendable, Equatable {
    /// What a key did to the editor.
    public enum Outcome: Equatable, Sendable {
        /// Not an editing key: the caller may give it another meaning.
        case ignored
        /// Text or cursor may have changed: redraw the input line.
        case edited
        /// Enter on a line that is not blank: the whole text, newlines included. The editor is empty again.
        case submitted(String)
        /// Ctrl-D on an empty line.
        case quit
    }

    enum LastAction: Equatable, Sendable {
        case other
        case kill
        case yank(range: Range<Int>, back: Int)
        case complete(range: Range<Int>, candidates: [String], index: Int)
    }

    public internal(set) var characters: [Character] = []
    /// Grapheme index, 0...characters.count.
    public internal(set) var cursor = 0
    public var history = InputHistory()
    var lastAction = LastAction.other

    public init() {}

    public var text: String { String(characters) }
    public var isEmpty: Bool { characters.isEmpty }

    /// The logical lines (split at newlines).
    public var lines: [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    /// The cursor's logical line and its column there in display columns (wide characters count 2).
    public var cursorLocation: (line: Int, column: Int) {
        let start = lineStart(at: cursor)
        let line = characters[..<cursor].reduce(0) { $0 + ($1 == "\n" ? 1 : 0) }
        return (line, DisplayWidth.of(String(characters[start..<cursor])))
    }

    /// Replaces the whole text and puts the cursor at its end.
    public mutating func setText(_ text: String) {
        characters = Array(text)
        cursor = characters.count
        lastAction = .other
    }

    /// Inserts text at the cursor and moves the cursor after it.
    public mutating func insert(_ text: String) {
        replace(cursor..<cursor, with: text)
    }

    /// Applies one key. `completer` answers Tab.
    public mutating func handle(_ key: Key, killRing: inout KillRing, completer: TabCompleter = TabCompleter()) -> Outcome {
        let previous = lastAction
        lastAction = .other
        if let outcome = handleMotion(key) { return outcome }
        if let outcome = handleKill(key, killRing: &killRing, previous: previous) { return outcome }
        switch (key.code, key.modifiers) {
        case (.character(let character), []), (.character(let character), .shift):
            insert(String(character))
        case (.paste(let text), _):
            insert(text)
        case (.enter, []):
            return submit()
        case (.enter, .alt), (.character("j"), .control):
            insert("\n")
        case (.backspace, []), (.backspace, .shift):
            if cursor > 0 { replace((cursor - 1)..<cursor, with: "") }
        case (.delete, []):
            if cursor < characters.count { replace(cursor..<(cursor + 1), with: "") }
        case (.character("d"), .control):
            if characters.isEmpty { return .quit }
            if cursor < characters.count { replace(cursor..<(cursor + 1), with: "") }
        case (.up, []):
            moveVertically(by: -1)
        case (.down, []):
            moveVertically(by: 1)
        case (.tab, []), (.tab, .shift):
            complete(backwards: key.modifiers == .shift, previous: previous, completer: completer)
        default:
            lastAction = previous
            return .ignored
        }
        return .edited
    }

    /// Replaces `range` with `text` and puts the cursor after the new text. The text is segmented
    /// again as a whole, so graphemes join across the seam as they would in the terminal.
    mutating func replace(_ range: Range<Int>, with text: String) {
        let head = String(characters[..<range.lowerBound]) + text
        characters = Array(head + String(characters[range.upperBound...]))
        cursor = min(head.count, characters.count)
    }

    private mutating func submit() -> Outcome {
        let text = self.text
        guard text.contains(where: { !$0.isWhitespace }) else { return .ignored }
        history.record(text)
        characters = []
        cursor = 0
        return .submitted(text)
    }

    private mutating func moveVertically(by delta: Int) {
        let location = cursorLocation
        let lineCount = characters.reduce(1) { $0 + ($1 == "\n" ? 1 : 0) }
        let target = location.line + delta
        guard (0..<lineCount).contains(target) else {
            let recalled = delta < 0 ? history.older(current: text) : history.newer()
            if let recalled {
                characters = Array(recalled)
                cursor = characters.count
            }
            return
        }
        var start = 0
        for _ in 0..<target { start = (characters[start...].firstIndex(of: "\n") ?? characters.count) + 1 }
        let end = lineEnd(at: start)
        var index = start
        var columns = 0
        while index < end, columns + DisplayWidth.of(characters[index]) <= location.column {
            columns += DisplayWidth.of(characters[index])
            index += 1
        }
        cursor = index
    }

    private mutating func complete(backwards: Bool, previous: LastAction, completer: TabCompleter) {
        if case .complete(let range, let candidates, let index) = previous, range.upperBound == cursor {
            let next = (index + (backwards ? -1 : 1) + candidates.count) % candidates.count
            replace(range, with: candidates[next])
            lastAction = .complete(range: range.lowerBound..<cursor, candidates: candidates, index: next)
            return
        }
        guard let (range, candidates) = completer.complete(Array(characters[..<cursor])) else { return }
        let index = backwards ? candidates.count - 1 : 0
        replace(range, with: candidates[index])
        if candidates.count > 1 { lastAction = .complete(range: range.lowerBound..<cursor, candidates: candidates, index: index) }
    }
}
