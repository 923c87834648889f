import ChatModel
import Testing

@Suite struct ChatStateActivityTests {
    private func threeBuffers() -> ChatFixture {
        var fixture = ChatFixture.connected([session("a", updatedAt: 30), session("b", updatedAt: 20, lastRead: 6), session("c", updatedAt: 10)])
        fixture.history("a", 1...2)
        return fixture
    }

    @Test func activityElsewhereGoesToTheHotlistAndRingsOnce() {
        var fixture = threeBuffers()
        let effects = fixture.server(.message(key: "b", fixture.message("b", 7)))
        #expect(effects == [.bell, .redraw])
        #expect(fixture.state.hotlist.entries == [Hotlist.Entry(key: "b", level: .message)])
        #expect(fixture.state.buffers["b"]?.unreadCount == 1)
        #expect(!fixture.server(.message(key: "c", fixture.message("c", 3, role: .user))).contains(.bell), "own message from another device")
        #expect(fixture.state.hotlist.entries.map(\.level) == [.message, .low])
        #expect(fixture.state.buffers["c"]?.unreadCount == 0)
        let here = fixture.server(.message(key: "a", fixture.message("a", 3)))
        #expect(!here.contains(.bell) && here.markReads == [.markRead(key: "a", seq: 3)])
        #expect(fixture.state.hotlist.entries.map(\.key) == ["b", "c"])
    }

    @Test func unreadConversationsAtStartAreOnTheHotlistWithoutABell() {
        var fixture = ChatFixture()
        fixture.server(.connection(.connected))
        let listed = fixture.server(
            .sessionsListed([session("read", updatedAt: 30), session("news", updatedAt: 20, unread: 2), session("more", updatedAt: 10, unread: 1)])
        )
        #expect(!listed.contains(.bell), "nothing arrived: it was there before")
        #expect(fixture.state.activeKey == "read")
        #expect(fixture.state.hotlist.entries == [Hotlist.Entry(key: "news", level: .message), Hotlist.Entry(key: "more", level: .message)])
        let status = fixture.state.screen().status.map(\.text).joined()
        #expect(status.hasSuffix("[Act: 2:news(2) 3:more(1)]"), "\(status)")
        var unreadFirst = ChatFixture()
        unreadFirst.server(.sessionsListed([session("news", updatedAt: 20, unread: 2)]))
        #expect(unreadFirst.state.activeKey == "news" && unreadFirst.state.hotlist.entries.isEmpty, "the active buffer is not on it")
    }

    @Test func aStreamedAnswerRingsOnceAndItsFinalDoesNotCountTwice() {
        var fixture = threeBuffers()
        #expect(fixture.server(.streaming(key: "b", id: "r", text: "Hel")) == [.bell, .redraw])
        #expect(fixture.server(.streaming(key: "b", id: "r", text: "Hello")) == [.redraw])
        #expect(fixture.server(.final(key: "b", ChatMessage(id: "r", seq: 8, role: .assistant, text: "Hello!", timestamp: 0))) == [.redraw])
        #expect(fixture.state.buffers["b"]?.unreadCount == 1)
        var quiet = ChatFixture(bell: false)
        quiet.server(.sessionsListed([session("a", updatedAt: 2), session("b", updatedAt: 1)]))
        #expect(quiet.server(.message(key: "b", quiet.message("b", 1))) == [.redraw], "bell turned off")
        #expect(quiet.state.hotlist.level(of: "b") == .message)
    }

    @Test func altAVisitsTheHotlistOldestFirstThenGoesBack() {
        var fixture = threeBuffers()
        fixture.server(.message(key: "c", fixture.message("c", 3, role: .user)))
        fixture.server(.message(key: "b", fixture.message("b", 7)))
        #expect(fixture.state.hotlist.next == "b", "messages before low activity")
        let entered = fixture.key(.alt("a"))
        #expect(fixture.state.activeKey == "b")
        #expect(entered.fetches == [.fetchHistory(key: "b", limit: 200)])
        #expect(entered.markReads == [.markRead(key: "b", seq: 7)], "entering shows its newest line")
        #expect(fixture.history("b", 5...7).markReads.isEmpty)
        #expect(fixture.state.screen().conversation.rows.map(\.style) == [.assistant, .assistant, .unreadMarker, .assistant])
        fixture.key(.alt("a"))
        #expect(fixture.state.activeKey == "c")
        #expect(fixture.state.hotlist.entries.isEmpty)
        fixture.key(.alt("a"))
        #expect(fixture.state.activeKey == "a", "back where Alt-A started")
        fixture.key(.alt("a"))
        #expect(fixture.state.activeKey == "a" && fixture.state.notice == "no activity")
    }

    @Test func unreadCountsFromTheServerAndReadingElsewhere() {
        var fixture = threeBuffers()
        #expect(!fixture.server(.sessionChanged(SessionUpdate(key: "b", unreadCount: 3))).contains(.bell))
        #expect(fixture.state.hotlist.level(of: "b") == .message)
        fixture.server(.sessionChanged(SessionUpdate(key: "b", unreadCount: 0, lastReadSeq: 9)))
        #expect(fixture.state.hotlist.level(of: "b") == .low, "read on another device: just-read activity")
        #expect(fixture.state.buffers["b"]?.lastReadSeq == 9)
        fixture.server(.message(key: "b", fixture.message("b", 10)))
        #expect(fixture.state.buffers["b"]?.showsUnreadMarker == true)
        fixture.server(.sessionChanged(SessionUpdate(key: "b", unreadCount: 0, lastReadSeq: 10)))
        #expect(fixture.state.buffers["b"]?.showsUnreadMarker == false, "read elsewhere: no longer new here either")
        fixture.server(.sessionsListed([SessionSummary(key: "b", displayName: "b", backend: "claude")]))
        #expect(fixture.state.buffers["b"]?.unreadCount == 0 && fixture.state.hotlist.level(of: "b") == .low, "a list without counts changes nothing")
        fixture.server(.sessionChanged(SessionUpdate(key: "new", displayName: "New one", unreadCount: 1)))
        #expect(fixture.state.buffers["new"]?.displayName == "New one", "an unknown conversation with activity opens")
    }

    @Test func theMarkerIsSetOnLeavingMovedByArrivalsAndClearedBySending() {
        var fixture = threeBuffers()
        fixture.key(.control("n"))
        #expect(fixture.state.activeKey == "b")
        #expect(fixture.state.buffers["a"]?.unreadMarker == LineOrder(seq: 2, local: 0), "left: after its last line")
        fixture.server(.message(key: "a", fixture.message("a", 3)))
        fixture.server(.message(key: "a", fixture.message("a", 4)))
        fixture.key(.control("p"))
        #expect(fixture.state.screen().conversation.rows.map(\.style) == [.assistant, .assistant, .unreadMarker, .assistant, .assistant])
        fixture.type("thanks", enter: true)
        #expect(!fixture.state.screen().conversation.rows.contains { $0.style == .unreadMarker }, "sending reads the buffer")
        fixture.keys(.control("n"), .control("p"))
        #expect(!fixture.state.screen().conversation.rows.contains { $0.style == .unreadMarker }, "nothing new since leaving")
    }

    @Test func aMessageForAClosedBufferReopensIt() {
        var fixture = threeBuffers()
        fixture.keys(.alt("3"))
        fixture.type("/close", enter: true)
        #expect(fixture.state.buffers.keys == ["a", "b"] && fixture.state.activeKey == "b")
        fixture.server(.sessionsListed([session("a"), session("b"), session("c")]))
        #expect(fixture.state.buffers["c"] == nil, "a list does not reopen it")
        fixture.server(.message(key: "c", fixture.message("c", 4)))
        #expect(fixture.state.buffers.keys == ["a", "b", "c"])
        #expect(fixture.state.hotlist.level(of: "c") == .message)
    }
}
