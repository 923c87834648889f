import ChatModel
import Testing

@Suite struct ChatStateCommandTests {
    private func ready() -> ChatFixture {
        var fixture = ChatFixture.connected([session("a", displayName: "Trip")])
        fixture.history("a", 1...1)
        return fixture
    }

    @Test func newChecksTheBackend() {
        var fixture = ready()
        #expect(fixture.type("/new", enter: true).first == .createConversation(backend: "claude", title: nil))
        #expect(fixture.type("/new CODEX Holiday plans", enter: true).first == .createConversation(backend: "codex", title: "Holiday plans"))
        #expect(fixture.type("/new gpt9", enter: true) == [.redraw])
        #expect(fixture.state.notice == "unknown backend gpt9 (backends: claude, codex)")
    }

    @Test func renameHistoryBackendsHelpQuit() {
        var fixture = ready()
        #expect(fixture.type("/rename Kyoto trip", enter: true).first == .rename(key: "a", title: "Kyoto trip"))
        #expect(fixture.state.activeBuffer?.displayName == "Kyoto trip")
        #expect(fixture.type("/history 50", enter: true).first == .fetchHistory(key: "a", limit: 50))
        #expect(fixture.type("/history", enter: true).first == .fetchHistory(key: "a", limit: 200))
        #expect(fixture.type("/backends", enter: true).first == .listBackends)
        #expect(fixture.state.activeBuffer?.lines.last?.text == "backends: claude, codex (default: claude)")
        fixture.type("/help", enter: true)
        let help = fixture.state.activeBuffer?.lines.last
        #expect(help?.role == .system && help?.text.contains("/quit") == true && help?.text.contains("Alt-A") == true)
        fixture.type("/help rename", enter: true)
        #expect(fixture.state.activeBuffer?.lines.last?.text == Command.usage["rename"])
        #expect(fixture.type("/quit", enter: true) == [.quit, .redraw])
    }

    @Test func badCommandsShowTheirErrorAndSendNothing() {
        var fixture = ready()
        #expect(fixture.type("/frob", enter: true) == [.redraw])
        #expect(fixture.state.notice == "unknown command /frob (try /help)")
        fixture.key(.character("x"))
        #expect(fixture.state.notice == nil, "the next key clears it")
        fixture.key(.backspace)
        fixture.type("/history lots", enter: true)
        #expect(fixture.state.notice == "/history: lots is not a number from 1 to 1000")
        #expect(fixture.state.editor.history.entries.contains("/frob"), "commands go to the input history too")
    }
}

@Suite struct ChatScreenTests {
    @Test func theScreenHoldsEveryPart() {
        var fixture = ChatFixture.connected([
            session("a", displayName: "Trip", updatedAt: 3), session("b", displayName: "Work", backend: "codex", updatedAt: 2),
            session("c", displayName: "Notes", backend: "codex", updatedAt: 1),
        ])
        fixture.history("a", 1...3)
        fixture.server(.message(key: "c", fixture.message("c", 9)))
        fixture.type("hé世")
        let screen = fixture.state.screen()
        #expect(screen.title == "Trip — claude — connected")
        #expect(screen.sidebar.map(\.text) == ["claude", "1 Trip", "codex", "2 Work", "3 Notes (1)"])
        #expect(screen.sidebar.map(\.isActive) == [false, true, false, false, false])
        #expect(screen.sidebar.last?.activity == .message)
        #expect(
            screen.status == [
                StyledSpan("[connected]", .connected), StyledSpan(" [1:Trip]"), StyledSpan(" [Act:"), StyledSpan(" 3:Notes(1)", .activityMessage),
                StyledSpan("]"),
            ]
        )
        #expect(screen.input.rows == ["> hé世"])
        #expect(screen.cursorRow == 23 && screen.cursorColumn == 6)
        #expect(screen.conversation.rows.count == 3)
    }

    @Test func aResizeIsJustAnotherRender() {
        var fixture = ChatFixture.connected([session("a")])
        fixture.server(.history(key: "a", messages: [fixture.message("a", 1, text: String(repeating: "wide 世界 text ", count: 12))]))
        let wide = fixture.state.screen().conversation.rows
        fixture.input(.resize(columns: 40, rows: 10))
        let narrow = fixture.state.screen()
        #expect(narrow.layout.sidebar == nil && narrow.sidebar.isEmpty)
        #expect(narrow.conversation.rows.count == 7 && narrow.conversation.hasMoreAbove)
        #expect(narrow.conversation.rows.allSatisfy { DisplayWidth.of($0.text) <= 40 })
        #expect(wide.count < narrow.conversation.totalRows)
        #expect(narrow.status.contains(StyledSpan(" [more ↓]")) == false)
    }

    @Test func beforeAnyConversationTheTitleShowsTheLink() {
        var fixture = ChatFixture()
        fixture.server(.connection(.disconnected(reason: "refused", retryInMillis: 2_500)))
        #expect(fixture.state.screen().title == "clawrelay chat — disconnected: refused, retry in 3 s")
        #expect(fixture.state.screen().status.first?.style == .disconnected)
    }

    @Test func aLongStatusIsCutAtTheWidth() {
        var fixture = ChatFixture.connected([session("a", displayName: "A long name")], columns: 40)
        fixture.server(.connection(.disconnected(reason: "could not connect to ws://127.0.0.1:18789: connection refused", retryInMillis: nil)))
        let status = fixture.state.screen().status
        #expect(status == [StyledSpan("[disconnected: could not connect to ws:…", .disconnected)])
        #expect(DisplayWidth.of(status.map(\.text).joined()) == 40)
        fixture.server(.connection(.connected))
        #expect(fixture.state.screen().status == [StyledSpan("[connected]", .connected), StyledSpan(" [1:A long name]")])
        fixture.input(.resize(columns: 20, rows: 24))
        #expect(fixture.state.screen().status == [StyledSpan("[connected]", .connected), StyledSpan(" [1:A lo…")])
    }
}
