import ChatModel
import Testing

@Suite struct ConversationRendererTests {
    private func line(_ id: String, _ seq: Int64, _ text: String, role: ChatRole = .user, state: ChatLine.State = .final) -> ChatLine {
        ChatLine(id: id, seq: seq, role: role, text: text, timestamp: ChatFixture.start, state: state, order: LineOrder(seq: seq, local: 0))
    }

    @Test func gutterWithTimeAndSenderThenIndentedContinuation() {
        let renderer = ConversationRenderer(width: 40, assistantName: "claude")
        let rows = renderer.rows(of: [line("1", 1, "hello"), line("2", 2, String(repeating: "word ", count: 8), role: .assistant)], marker: nil)
        #expect(rows.map(\.text) == ["22:13      you │ hello", "22:13   claude │ word word word word ", "               │ word word word word "])
        #expect(rows.map(\.style) == [.user, .assistant, .assistant])
        #expect(rows.allSatisfy { $0.gutterColumns == 17 })
        #expect(rows.map(\.lineID) == ["1", "2", "2"])
    }

    @Test func narrowViewsPutTheSenderOnItsOwnRow() {
        let rows = ConversationRenderer(width: 12).rows(of: [line("1", 1, "hi there you")], marker: nil)
        #expect(rows.map(\.text) == ["22:13 you", "hi there you"])
    }

    @Test func theMarkerGoesBeforeTheFirstNewLine() {
        let renderer = ConversationRenderer(width: 40)
        let lines = [line("1", 1, "a"), line("2", 2, "b"), line("3", 3, "c", role: .assistant)]
        #expect(
            renderer.rows(of: lines, marker: LineOrder(seq: 1, local: 0)).map(\.style) == [.user, .user, .unreadMarker, .assistant],
            "the user's own lines are not news"
        )
        let answers = lines.map {
            var line = $0
            line.role = .assistant
            return line
        }
        let rows = renderer.rows(of: answers, marker: LineOrder(seq: 1, local: 0))
        #expect(rows.map(\.style) == [.assistant, .unreadMarker, .assistant, .assistant])
        #expect(rows[1].text == "─── new messages " + String(repeating: "─", count: 23))
        #expect(DisplayWidth.of(rows[1].text) == 40)
        #expect(
            !renderer.rows(of: answers, marker: LineOrder(seq: 3, local: 0)).contains { $0.style == .unreadMarker },
            "nothing after it: no marker"
        )
        #expect(renderer.rows(of: answers, marker: .start).first?.style == .unreadMarker)
    }

    @Test func stylesFollowRoleAndState() {
        let rows = ConversationRenderer(width: 40).rows(
            of: [
                line("1", 1, "p", state: .pending), line("2", 2, "s", role: .assistant, state: .streaming), line("3", 3, "x", role: .system),
                line("4", 4, "e", role: .error),
            ],
            marker: nil,
            highlight: "3"
        )
        #expect(rows.map(\.style) == [.pending, .streaming, .searchMatch, .error])
    }

    @Test(arguments: 1...50)
    func noRowIsWiderThanTheViewAtAnyWidth(width: Int) {
        let lines = [line("1", 1, "日本語のテキスト and English 😀👨‍👩‍👧 mixed\ttabs\u{1B}[0m"), line("2", 2, "e\u{301}" + String(repeating: "x", count: 70))]
        for row in ConversationRenderer(width: width).rows(of: lines, marker: LineOrder(seq: 1, local: 0)) {
            #expect(DisplayWidth.of(row.text) <= max(width, 2), "\(row.text) at \(width)")
            #expect(!row.text.unicodeScalars.contains { $0.value < 0x20 }, "controls never reach the terminal")
        }
    }

    @Test func windowShowsTheRowsEndingAtTheOffset() {
        let rows = (0..<10).map { ViewRow(text: "\($0)", style: .user) }
        #expect(ConversationRenderer.window(rows, height: 4, scrollOffset: 0).rows.map(\.text) == ["6", "7", "8", "9"])
        let scrolled = ConversationRenderer.window(rows, height: 4, scrollOffset: 3)
        #expect(scrolled.rows.map(\.text) == ["3", "4", "5", "6"])
        #expect(!scrolled.isAtBottom && scrolled.hasMoreAbove)
        let clamped = ConversationRenderer.window(rows, height: 4, scrollOffset: 100)
        #expect(clamped.scrollOffset == 6 && clamped.rows.map(\.text) == ["0", "1", "2", "3"] && !clamped.hasMoreAbove)
        #expect(ConversationRenderer.window(Array(rows.prefix(2)), height: 4, scrollOffset: 1).rows.count == 2)
    }

    @Test func clockUsesTheOffset() {
        #expect(ConversationRenderer.clock(ChatFixture.start, utcOffsetSeconds: 0) == "22:13")
        #expect(ConversationRenderer.clock(ChatFixture.start, utcOffsetSeconds: 3_600) == "23:13")
        #expect(ConversationRenderer.clock(ChatFixture.start, utcOffsetSeconds: 7_200) == "00:13")
        #expect(ConversationRenderer.clock(-60_000, utcOffsetSeconds: 0) == "23:59")
    }
}

@Suite struct InputViewTests {
    @Test func promptTextAndCursor() {
        let view = InputView.render(Array("hello"), cursor: 5, prompt: "> ", width: 20)
        #expect(view.rows == ["> hello"] && view.cursorRow == 0 && view.cursorColumn == 7)
        #expect(InputView.render(Array("hello"), cursor: 1, prompt: "> ", width: 20).cursorColumn == 3)
    }

    @Test func longLinesWrapUnderThePromptAndAFullRowMovesTheCursorDown() {
        let view = InputView.render(Array("abcdefghijkl"), cursor: 12, prompt: "> ", width: 10)
        #expect(view.rows == ["> abcdefgh", "  ijkl"] && view.cursorRow == 1 && view.cursorColumn == 6)
        let full = InputView.render(Array("abcdefgh"), cursor: 8, prompt: "> ", width: 10)
        #expect(full.rows == ["> abcdefgh", "  "] && full.cursorRow == 1 && full.cursorColumn == 2)
        let middle = InputView.render(Array("abcdefghijkl"), cursor: 8, prompt: "> ", width: 10)
        #expect(middle.cursorRow == 1 && middle.cursorColumn == 2)
    }

    @Test func wideCharactersMoveTheCursorTwoColumns() {
        let view = InputView.render(Array("世界世界世"), cursor: 5, prompt: "> ", width: 10)
        #expect(view.rows == ["> 世界世界", "  世"] && view.cursorRow == 1 && view.cursorColumn == 4)
        #expect(InputView.render(Array("a世b"), cursor: 2, prompt: "", width: 10).cursorColumn == 3)
    }

    @Test func controlsInTheInputAreDrawnVisibly() {
        let view = InputView.render(Array("a\u{1B}[31m\tb"), cursor: 7, prompt: "> ", width: 20)
        #expect(view.rows == ["> a\u{FFFD}[31m b"] && view.cursorColumn == 9)
    }

    @Test func newlinesAndHeight() {
        let text = Array("one\ntwo\nthree\nfour")
        let view = InputView.render(text, cursor: 5, prompt: "> ", width: 20)
        #expect(view.rows == ["> one", "  two", "  three", "  four"] && view.cursorRow == 1 && view.cursorColumn == 3)
        let cut = InputView.render(text, cursor: text.count, prompt: "> ", width: 20, height: 2)
        #expect(cut.rows == ["  three", "  four"] && cut.cursorRow == 1 && cut.totalRows == 4)
    }
}

@Suite struct ScreenLayoutTests {
    @Test func wideTerminalsGetABufferList() {
        let layout = ScreenLayout.compute(columns: 80, rows: 24, inputRows: 1)
        #expect(layout.title == ScreenRect(row: 0, column: 0, width: 80, height: 1))
        #expect(layout.sidebar == ScreenRect(row: 1, column: 0, width: 16, height: 21))
        #expect(layout.conversation == ScreenRect(row: 1, column: 17, width: 63, height: 21))
        #expect(layout.status == ScreenRect(row: 22, column: 0, width: 80, height: 1))
        #expect(layout.input == ScreenRect(row: 23, column: 0, width: 80, height: 1))
    }

    @Test func narrowTerminalsAndTallInput() {
        let layout = ScreenLayout.compute(columns: 40, rows: 24, inputRows: 20)
        #expect(layout.sidebar == nil)
        #expect(layout.conversation == ScreenRect(row: 1, column: 0, width: 40, height: 14))
        #expect(layout.input == ScreenRect(row: 16, column: 0, width: 40, height: 8))
        let tiny = ScreenLayout.compute(columns: 5, rows: 2, inputRows: 1)
        #expect(tiny.conversation.height == 0 && tiny.input.height == 1)
    }
}
