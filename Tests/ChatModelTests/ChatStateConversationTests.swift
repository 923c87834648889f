import ChatModel
import Testing

@Suite struct ChatStateConversationTests {
    private func texts(_ fixture: ChatFixture) -> [String] {
        fixture.state.activeBuffer?.lines.map(\.text) ?? []
    }

    @Test func aStreamingAnswerRedrawsInPlaceAndItsFinalReplacesIt() {
        var fixture = ChatFixture.connected([session("a")])
        fixture.history("a", 1...1)
        #expect(fixture.server(.streaming(key: "a", id: "r1", text: "Hel")) == [.redraw])
        #expect(fixture.server(.streaming(key: "a", id: "r1", text: "Hello")) == [.redraw])
        #expect(fixture.server(.streaming(key: "a", id: "r1", text: "Hello")).isEmpty, "nothing new: no redraw")
        #expect(texts(fixture) == ["line 1", "Hello"])
        #expect(fixture.state.screen().conversation.rows.last?.style == .streaming)
        let final = fixture.server(.final(key: "a", ChatMessage(id: "r1", seq: 2, role: .assistant, text: "Hello world", timestamp: 0)))
        #expect(final == [.markRead(key: "a", seq: 2), .redraw])
        #expect(texts(fixture) == ["line 1", "Hello world"])
        #expect(fixture.state.screen().conversation.rows.filter { $0.text.contains("Hello") }.count == 1)
    }

    @Test func aReconnectReloadsTheActiveBufferWithoutDuplicates() {
        var fixture = ChatFixture.connected([session("a", updatedAt: 2), session("b", updatedAt: 1)])
        fixture.history("a", 1...2)
        fixture.server(.streaming(key: "a", id: "a-3", text: "half"))
        fixture.server(.streaming(key: "a", id: "lost", text: "gone"))
        fixture.server(.connection(.disconnected(reason: "EOF", retryInMillis: 1_000)))
        #expect(fixture.state.activeBuffer?.lines.map(\.state) == [.final, .final, .interrupted, .interrupted])
        let effects = fixture.server(.connection(.connected))
        #expect(effects == [.listSessions, .listBackends, .listApprovals, .fetchHistory(key: "a", limit: 200), .redraw])
        fixture.history("a", 1...4) { $0 == 3 ? "half and the rest" : "line \($0)" }
        #expect(texts(fixture) == ["line 1", "line 2", "half and the rest", "line 4"])
        fixture.history("a", 1...4)
        #expect(fixture.state.activeBuffer?.lines.count == 4)
        #expect(fixture.key(.control("n")).fetches == [.fetchHistory(key: "b", limit: 200)])
    }

    @Test func aRefusalForGoodStopsTheAnswerAndSaysWhyInTheBuffer() {
        var fixture = ChatFixture.connected([session("a")])
        fixture.history("a", 1...1)
        fixture.server(.streaming(key: "a", id: "r1", text: "half"))
        fixture.server(.connection(.refused(reason: "this device was revoked: run clawrelay devices allow d1 on the relay")))
        #expect(texts(fixture) == ["line 1", "half", "this device was revoked: run clawrelay devices allow d1 on the relay"])
        #expect(fixture.state.activeBuffer?.lines.map(\.state).dropLast() == [.final, .interrupted])
        #expect(fixture.state.screen().status.first == StyledSpan("[refused]", .disconnected), "no retry is promised")
    }

    @Test func anErrorStopsTheAnswerAndIsShown() {
        var fixture = ChatFixture.connected([session("a")])
        fixture.server(.streaming(key: "a", id: "r", text: "partial"))
        fixture.server(.error(key: "a", message: "backend crashed"))
        #expect(fixture.state.activeBuffer?.lines.map(\.state) == [.interrupted, .local])
        #expect(fixture.state.screen().conversation.rows.last?.style == .error)
        fixture.server(.error(key: nil, message: "rate limited"))
        #expect(fixture.state.notice == "rate limited")
    }

    @Test func pageUpAndDownScrollAndReadingWaitsForTheBottom() {
        var fixture = ChatFixture.connected([session("a")])
        fixture.history("a", 1...60)
        #expect(fixture.state.screen().conversation.rows.count == 21)
        fixture.key(.pageUp)
        #expect(fixture.state.activeBuffer?.scrollOffset == 20)
        #expect(fixture.state.screen().conversation.rows.last?.text.hasSuffix("line 40") == true)
        #expect(fixture.server(.message(key: "a", fixture.message("a", 61))).markReads.isEmpty, "scrolled up: not read")
        #expect(fixture.state.activeBuffer?.scrollOffset == 21, "the view stays on what was being read")
        #expect(fixture.state.screen().conversation.rows.last?.text.hasSuffix("line 40") == true)
        fixture.key(.pageDown)
        #expect(fixture.key(.pageDown).markReads == [.markRead(key: "a", seq: 61)])
        fixture.key(Key(.home, .alt))
        #expect(fixture.state.screen().conversation.rows.first?.text.hasSuffix("line 1") == true)
        fixture.key(Key(.end, .alt))
        #expect(fixture.state.screen().conversation.isAtBottom)
    }

    @Test func pageUpAtTheTopLoadsMoreHistory() {
        var fixture = ChatFixture.connected([session("a")])
        fixture.history("a", 1...200)
        fixture.key(Key(.home, .alt))
        #expect(fixture.key(.pageUp).fetches == [.fetchHistory(key: "a", limit: 400)])
        fixture.history("a", 1...150)
        #expect(fixture.key(.pageUp).fetches.isEmpty, "fewer lines than asked for: that was all")
    }

    @Test func altUJumpsToTheFirstUnread() {
        var fixture = ChatFixture.connected([session("a", updatedAt: 2), session("b", updatedAt: 1)])
        fixture.history("a", 1...10)
        fixture.key(.control("n"))
        for seq: Int64 in 11...50 { fixture.server(.message(key: "a", fixture.message("a", seq))) }
        fixture.key(.control("p"))
        #expect(fixture.state.screen().conversation.rows.first?.style != .unreadMarker)
        fixture.key(.alt("u"))
        let rows = fixture.state.screen().conversation.rows
        #expect(rows.first?.style == .unreadMarker && rows[1].text.hasSuffix("line 11"))
    }

    @Test func ctrlRSearchesBackwardsIncrementally() {
        var fixture = ChatFixture.connected([session("a")])
        fixture.history("a", 1...60) { $0 % 20 == 5 ? "apple \($0)" : "line \($0)" }
        fixture.key(.control("r"))
        fixture.type("APP")
        #expect(fixture.state.search?.matchID == "a-45")
        #expect(fixture.state.screen().input.rows == ["(search) APP"])
        fixture.key(.control("r"))
        #expect(fixture.state.search?.matchID == "a-25")
        #expect(fixture.state.screen().conversation.rows.last?.style == .searchMatch)
        fixture.keys(.control("r"), .control("r"))
        #expect(fixture.state.search?.matchID == "a-5" && fixture.state.search?.failed == true)
        #expect(fixture.state.screen().input.rows == ["(failing search) APP"])
        fixture.key(.backspace)
        #expect(fixture.state.search?.matchID == "a-45" && fixture.state.search?.failed == false)
        fixture.key(.escape)
        #expect(fixture.state.search == nil && fixture.state.activeBuffer?.scrollOffset == 0)
        fixture.type("/search line 3", enter: true)
        #expect(fixture.state.search?.matchID == "a-39")
        fixture.key(.enter)
        #expect(fixture.state.search == nil && fixture.state.activeBuffer?.scrollOffset ?? 0 > 0, "Enter stays where the search went")
        fixture.key(.control("r"))
        fixture.key(.control("n"))
        #expect(fixture.state.search == nil, "another key ends the search")
    }
}
