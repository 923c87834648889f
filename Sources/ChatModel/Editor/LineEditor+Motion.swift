/// Cursor motions: characters, words (letters and digits; punctuation, spaces and emoji separate
/// words), line starts and ends of the current logical line.
extension LineEditor {
    mutating func handleMotion(_ key: Key) -> Outcome? {
        switch (key.code, key.modifiers) {
        case (.character("a"), .control), (.home, []): cursor = lineStart(at: cursor)
        case (.character("e"), .control), (.end, []): cursor = lineEnd(at: cursor)
        case (.character("b"), .control), (.left, []): cursor = max(0, cursor - 1)
        case (.character("f"), .control), (.right, []): cursor = min(characters.count, cursor + 1)
        case (.character("b"), .alt), (.left, .control), (.left, .alt): cursor = wordStart(before: cursor)
        case (.character("f"), .alt), (.right, .control), (.right, .alt): cursor = wordEnd(after: cursor)
        default: return nil
        }
        return .edited
    }

    static func isWordCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber
    }

    /// Where Alt-F stops: past the non-word characters after `index`, then past the word.
    func wordEnd(after index: Int) -> Int {
        var end = index
        while end < characters.count, !Self.isWordCharacter(characters[end]) { end += 1 }
        while end < characters.count, Self.isWordCharacter(characters[end]) { end += 1 }
        return end
    }

    /// Where Alt-B stops: back over non-word characters, then to the start of the word.
    func wordStart(before index: Int) -> Int {
        var start = index
        while start > 0, !Self.isWordCharacter(characters[start - 1]) { start -= 1 }
        while start > 0, Self.isWordCharacter(characters[start - 1]) { start -= 1 }
        return start
    }

    /// Where Ctrl-W stops: back over whitespace, then to the previous whitespace (readline's unix-word-rubout).
    func whitespaceWordStart(before index: Int) -> Int {
        var start = index
        while start > 0, characters[start - 1].isWhitespace { start -= 1 }
        while start > 0, !characters[start - 1].isWhitespace { start -= 1 }
        return start
    }

    func lineStart(at index: Int) -> Int {
        var start = index
        while start > 0, characters[start - 1] != "\n" { start -= 1 }
        return start
    }

    func lineEnd(at index: Int) -> Int {
        var end = index
        while end < characters.count, characters[end] != "\n" { end += 1 }
        return end
    }
}
