import ChatModel
import Testing

@Suite struct ChatStateStartTests {
    @Test func withNoConversationItAsksForOneOnTheDefaultBackend() {
        var fixture = ChatFixture()
        #expect(fixture.server(.connection(.connected)) == [.listSessions, .listBackends, .listApprovals, .redraw])
        #expect(fixture.server(.sessionsListed([])) == [.createConversation(backend: "claude", title: "claude"), .redraw])
        #expect(fixture.server(.sessionsListed([])) == [.redraw], "only at start")
        let created = fixture.server(.sessionCreated(SessionSummary(key: "backend:claude:1", displayName: "claude", backend: "claude")))
        #expect(fixture.state.activeKey == "backend:claude:1")
        #expect(created.fetches == [.fetchHistory(key: "backend:claude:1", limit: 200)])
    }

    @Test func textTypedBeforeTheFirstBufferOpensGoesWithIt() {
        var fixture = ChatFixture()
        fixture.server(.connection(.connected))
        fixture.server(.sessionsListed([]))
        fixture.type("hel")
        fixture.server(.sessionCreated(SessionSummary(key: "backend:claude:1", displayName: "claude", backend: "claude")))
        #expect(fixture.state.editor.text == "hel", "the draft is not lost when the first buffer opens")
        fixture.type("lo")
        #expect(fixture.state.editor.text == "hello")
    }

    @Test func withoutAConfiguredBackendItWaitsForTheServersDefault() {
        var fixture = ChatFixture(defaultBackend: nil)
        #expect(fixture.server(.sessionsListed([])) == [.redraw])
        #expect(
            fixture.server(.backendsListed(names: ["codex", "claude"], defaultBackend: "codex")) == [
                .createConversation(backend: "codex", title: "codex"), .redraw,
            ]
        )
        #expect(fixture.server(.backendsListed(names: ["codex"], defaultBackend: "codex")) == [.redraw])
    }

    @Test func theMostRecentConversationOpensAndLoads() {
        var fixture = ChatFixture()
        fixture.input(.resize(columns: 80, rows: 24))
        let effects = fixture.server(.sessionsListed([session("old", updatedAt: 1), session("recent", backend: "codex", updatedAt: 9)]))
        #expect(fixture.state.activeKey == "recent")
        #expect(effects == [.fetchHistory(key: "recent", limit: 200), .redraw])
        #expect(fixture.state.buffers.keys == ["old", "recent"])
    }

    @Test func enteringMarksReadOnceWhenTheNewestLineShows() {
        var fixture = ChatFixture.connected([session("a", updatedAt: 10, unread: 2, lastRead: 1)])
        #expect(fixture.history("a", 1...3).markReads == [.markRead(key: "a", seq: 3)])
        #expect(fixture.state.buffers["a"]?.unreadCount == 0)
        #expect(fixture.input(.resize(columns: 100, rows: 30)).markReads.isEmpty, "not again on a redraw")
        #expect(fixture.type("x").markReads.isEmpty)
        #expect(fixture.server(.sessionChanged(SessionUpdate(key: "a", unreadCount: 2))).markReads.isEmpty, "a late count does not repeat the seq")
        #expect(fixture.server(.message(key: "a", fixture.message("a", 4))).markReads == [.markRead(key: "a", seq: 4)])
        #expect(fixture.server(.message(key: "a", fixture.message("a", 4))).markReads.isEmpty, "the same message again")
        #expect(fixture.history("a", 1...4).markReads.isEmpty)
    }

    @Test func nothingIsReadBeforeTheScreenHasASize() {
        var fixture = ChatFixture()
        fixture.server(.sessionsListed([session("a", unread: 1, lastRead: 0)]))
        #expect(fixture.history("a", 1...1).markReads.isEmpty)
        #expect(fixture.input(.resize(columns: 80, rows: 24)).markReads == [.markRead(key: "a", seq: 1)])
    }

    @Test func theUnreadMarkerFromTheServersReadPosition() {
        var fixture = ChatFixture.connected([session("a", unread: 2, lastRead: 1)])
        fixture.history("a", 1...3)
        let styles = fixture.state.screen().conversation.rows.map(\.style)
        #expect(styles == [.assistant, .unreadMarker, .assistant, .assistant])
    }

    @Test func ctrlCAbortsAndCtrlDOnAnEmptyLineQuits() {
        var fixture = ChatFixture.connected([session("a")])
        #expect(fixture.key(.control("c")).contains(.abort(key: "a")))
        #expect(fixture.type("/abort", enter: true).contains(.abort(key: "a")))
        fixture.type("x")
        #expect(!fixture.key(.control("d")).contains(.quit), "Ctrl-D deletes when there is text")
        fixture.key(.backspace)
        #expect(fixture.key(.control("d")) == [.quit])
        var empty = ChatFixture()
        #expect(!empty.key(.control("c")).contains { if case .abort = $0 { return true } else { return false } })
        #expect(empty.state.notice == "no conversation to abort")
    }

    @Test func enterSendsWithAClientIDAndTheEchoIsReplaced() {
        var fixture = ChatFixture.connected([session("a")])
        fixture.history("a", 1...1)
        #expect(fixture.type("hello", enter: true) == [.send(key: "a", text: "hello", clientID: "t-1"), .redraw])
        #expect(fixture.state.activeBuffer?.lines.last?.state == .pending)
        fixture.server(.message(key: "a", ChatMessage(id: "m2", seq: 2, role: .user, text: "hello", timestamp: 0, clientID: "t-1")))
        #expect(fixture.state.activeBuffer?.lines.map(\.id) == ["a-1", "m2"])
        #expect(fixture.type("//etc", enter: true).first == .send(key: "a", text: "/etc", clientID: "t-2"))
        var nowhere = ChatFixture()
        #expect(nowhere.type("hi", enter: true) == [.redraw])
        #expect(nowhere.state.notice == "no conversation yet: /new [backend] starts one")
    }
}
