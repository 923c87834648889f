import ChatModel
import Testing

/// An editor with its kill ring, fed keys.
struct EditorHarness {
    var editor = LineEditor()
    var ring = KillRing()
    var completer = TabCompleter(backends: ["claude", "codex", "local"])

    init(_ text: String = "", cursor: Int? = nil) {
        editor.setText(text)
        if let cursor { for _ in 0..<(text.count - cursor) { press(.left) } }
    }

    @discardableResult
    mutating func press(_ keys: Key...) -> LineEditor.Outcome {
        var outcome = LineEditor.Outcome.ignored
        for key in keys { outcome = editor.handle(key, killRing: &ring, completer: completer) }
        return outcome
    }

    mutating func type(_ text: String) {
        for character in text { press(.character(character)) }
    }

    var text: String { editor.text }
    var cursor: Int { editor.cursor }
}

@Suite struct LineEditorTests {
    @Test func insertsAndMovesByCharacter() {
        var harness = EditorHarness()
        harness.type("abc")
        #expect(harness.text == "abc" && harness.cursor == 3)
        harness.press(.control("a"))
        #expect(harness.cursor == 0)
        harness.press(.control("f"), .control("f"))
        #expect(harness.cursor == 2)
        harness.press(.control("b"))
        #expect(harness.cursor == 1)
        harness.type("X")
        #expect(harness.text == "aXbc" && harness.cursor == 2)
        harness.press(.control("e"))
        #expect(harness.cursor == 4)
        harness.press(.home, .right, .end, .left)
        #expect(harness.cursor == 3)
        harness.press(.left, .left, .left, .left, .left)
        #expect(harness.cursor == 0, "stops at the start")
    }

    @Test func backspaceAndDelete() {
        var harness = EditorHarness("hello", cursor: 2)
        harness.press(.backspace)
        #expect(harness.text == "hllo" && harness.cursor == 1)
        harness.press(.delete)
        #expect(harness.text == "hlo" && harness.cursor == 1)
        harness.press(.control("d"))
        #expect(harness.text == "ho")
        harness.press(.home, .backspace)
        #expect(harness.text == "ho")
        harness.press(.end, .delete)
        #expect(harness.text == "ho")
    }

    @Test func wideCharactersAndCombiningMarksAreOneStep() {
        var harness = EditorHarness()
        harness.type("e\u{301}世😀a")
        #expect(harness.editor.characters == ["é", "世", "😀", "a"], "the accent joined its letter")
        #expect(harness.editor.cursorLocation.column == 6)
        harness.press(.left)
        #expect(harness.editor.cursorLocation.column == 5)
        harness.press(.left)
        #expect(harness.editor.cursorLocation.column == 3)
        harness.press(.backspace)
        #expect(harness.text == "e\u{301}😀a")
        harness.type("🇫")
        harness.type("🇷")
        #expect(harness.editor.characters == ["é", "🇫🇷", "😀", "a"], "regional indicators typed one by one make one flag")
        #expect(harness.cursor == 2)
    }

    @Test func wordMotionsSkipPunctuationAndCountWideLettersAsWordCharacters() {
        var harness = EditorHarness("foo, 世界! bar-baz 😀 qux", cursor: 0)
        var stops: [Int] = []
        for _ in 0..<6 {
            harness.press(.alt("f"))
            stops.append(harness.cursor)
        }
        #expect(stops == [3, 7, 12, 16, 22, 22])
        var back: [Int] = []
        for _ in 0..<6 {
            harness.press(.alt("b"))
            back.append(harness.cursor)
        }
        #expect(back == [19, 13, 9, 5, 0, 0])
        harness.press(Key(.right, .control), Key(.right, .control))
        #expect(harness.cursor == 7)
        harness.press(Key(.left, .control))
        #expect(harness.cursor == 5)
    }

    @Test func killsGoToTheRingAndYankBringsThemBack() {
        var harness = EditorHarness("hello big world")
        harness.press(.control("w"))
        #expect(harness.text == "hello big ")
        harness.press(.control("w"))
        #expect(harness.text == "hello ")
        #expect(harness.ring.entries == ["big world"], "consecutive backward kills make one entry")
        harness.press(.control("y"))
        #expect(harness.text == "hello big world")
        harness.press(.control("a"), .control("k"))
        #expect(harness.text == "" && harness.ring.entries.last == "hello big world")
        harness.press(.control("y"), .control("y"))
        #expect(harness.text == "hello big worldhello big world")
    }

    @Test func killToStartKillWordForwardAndBackward() {
        var harness = EditorHarness("one two three", cursor: 8)
        harness.press(.control("u"))
        #expect(harness.text == "three" && harness.cursor == 0)
        #expect(harness.ring.entries == ["one two "])
        harness.press(.right)
        harness.press(.alt("d"))
        #expect(harness.text == "t")
        harness.setUp("alpha beta")
        harness.press(Key.backspace.with(.alt))
        #expect(harness.text == "alpha ")
        #expect(harness.ring.entries.last == "beta")
    }

    @Test func altYCyclesThroughOlderKills() {
        var harness = EditorHarness("first")
        harness.press(.control("w"))
        harness.type("second")
        harness.press(.control("w"))
        harness.type(" ")
        harness.press(.control("y"))
        #expect(harness.text == " second")
        harness.press(.alt("y"))
        #expect(harness.text == " first")
        harness.press(.alt("y"))
        #expect(harness.text == " second", "the ring wraps round")
        harness.press(.left, .alt("y"))
        #expect(harness.text == " second", "Alt-Y only right after a yank")
    }

    @Test func multiLineInputAndLineKeys() {
        var harness = EditorHarness()
        harness.type("ab")
        harness.press(Key.enter.with(.alt))
        harness.type("cd")
        harness.press(.control("j"))
        harness.type("efg")
        #expect(harness.text == "ab\ncd\nefg")
        #expect(harness.editor.lines == ["ab", "cd", "efg"])
        #expect(harness.editor.cursorLocation == (2, 3) as (Int, Int))
        harness.press(.up)
        #expect(harness.editor.cursorLocation == (1, 2) as (Int, Int), "Up moves a line, keeping the column where it can")
        harness.press(.control("a"))
        #expect(harness.editor.cursorLocation == (1, 0) as (Int, Int))
        harness.press(.control("u"))
        #expect(harness.text == "abcd\nefg", "Ctrl-U at a line start takes the newline before")
        harness.press(.control("e"), .control("k"))
        #expect(harness.text == "abcdefg", "Ctrl-K at a line end takes the newline")
        harness.press(.paste("x\ny"))
        #expect(harness.text == "abcdx\nyefg")
        #expect(harness.press(.enter) == .submitted("abcdx\nyefg"), "Enter sends every line as one message")
        #expect(harness.text.isEmpty)
    }

    @Test func enterCtrlDAndBlankLines() {
        var harness = EditorHarness()
        #expect(harness.press(.control("d")) == .quit)
        #expect(harness.press(.enter) == .ignored)
        harness.type("  ")
        #expect(harness.press(.enter) == .ignored, "blank lines are not sent")
        harness.type("x")
        #expect(harness.press(.control("d")) == .edited)
        #expect(harness.press(.enter) == .submitted("  x"))
        #expect(harness.press(.pageUp) == .ignored)
        #expect(harness.press(.control("c")) == .ignored)
    }

    @Test func historyRecallsSentLinesAndKeepsTheDraft() {
        var harness = EditorHarness()
        for line in ["one", "two", "two"] {
            harness.type(line)
            harness.press(.enter)
        }
        #expect(harness.editor.history.entries == ["one", "two"])
        harness.type("draft")
        harness.press(.up)
        #expect(harness.text == "two")
        harness.press(.up)
        #expect(harness.text == "one")
        harness.press(.up)
        #expect(harness.text == "one")
        harness.press(.down)
        #expect(harness.text == "two")
        harness.press(.down)
        #expect(harness.text == "draft")
        harness.press(.down)
        #expect(harness.text == "draft")
    }

    @Test func tabCompletesCommandsAndBackendsAndCycles() {
        var harness = EditorHarness("/he")
        harness.press(.tab)
        #expect(harness.text == "/help ")
        harness.setUp("/b")
        harness.press(.tab)
        #expect(harness.text == "/backends ")
        harness.press(.tab)
        #expect(harness.text == "/buffer ")
        harness.press(.tab)
        #expect(harness.text == "/backends ")
        harness.press(Key(.tab, .shift))
        #expect(harness.text == "/buffer ")
        harness.setUp("/new c")
        harness.press(.tab)
        #expect(harness.text == "/new claude ")
        harness.press(.tab)
        #expect(harness.text == "/new codex ")
        harness.setUp("/NEW LO")
        harness.press(.tab)
        #expect(harness.text == "/NEW local ")
        harness.setUp("hello /he")
        harness.press(.tab)
        #expect(harness.text == "hello /he", "only at the start of the line")
        harness.setUp("/zz")
        harness.press(.tab)
        #expect(harness.text == "/zz")
    }

    @Test func completerCandidates() {
        let completer = TabCompleter(backends: ["Claude", "codex"], bufferNames: ["work stuff", "home"])
        #expect(completer.complete(Array("/"))?.candidates.count == Command.names.count)
        #expect(completer.complete(Array("/q"))?.candidates == ["/quit "])
        #expect(completer.complete(Array("/new cl"))?.candidates == ["Claude "])
        #expect(completer.complete(Array("/new cl"))?.range == 5..<7)
        #expect(completer.complete(Array("/buffer wo"))?.candidates == ["work stuff "])
        #expect(completer.complete(Array("/new claude x")) == nil)
        #expect(completer.complete(Array("/close x")) == nil)
    }
}

extension EditorHarness {
    mutating func setUp(_ text: String) {
        editor.setText(text)
    }
}
