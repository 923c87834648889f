import ChatModel
import Testing

@Suite struct ChatStateNavigationTests {
    private func fourBuffers() -> ChatFixture {
        ChatFixture.connected([
            session("s1", updatedAt: 40), session("s2", updatedAt: 30), session("s3", backend: "codex", updatedAt: 20),
            session("s4", backend: "codex", updatedAt: 10),
        ])
    }

    @Test func nextAndPreviousWrapRound() {
        var fixture = fourBuffers()
        var visited: [String?] = []
        for key: Key in [.control("n"), Key(.down, .alt), .control("p"), Key(.up, .alt), .control("p"), .control("n")] {
            fixture.key(key)
            visited.append(fixture.state.activeKey)
        }
        #expect(visited == ["s2", "s3", "s2", "s1", "s4", "s1"])
    }

    @Test func jumpsByNumberAndName() {
        var fixture = fourBuffers()
        fixture.key(.alt("2"))
        #expect(fixture.state.activeKey == "s2")
        fixture.keys(.alt("j"), .character("0"), .character("3"))
        #expect(fixture.state.activeKey == "s3")
        fixture.keys(.alt("j"), .character("x"))
        #expect(fixture.state.activeKey == "s3" && fixture.state.editor.isEmpty, "a non-digit cancels Alt-J and is swallowed")
        fixture.key(.alt("9"))
        #expect(fixture.state.notice == "no buffer 9")
        fixture.type("/buffer 1", enter: true)
        #expect(fixture.state.activeKey == "s1")
        fixture.type("/buffer S4", enter: true)
        #expect(fixture.state.activeKey == "s4")
        fixture.type("/buffer zzz", enter: true)
        #expect(fixture.state.notice == "no buffer matches zzz")
    }

    @Test func activityNeverRenumbers() {
        var fixture = fourBuffers()
        for key in ["s4", "s3", "s2"] {
            fixture.server(.message(key: key, ChatMessage(id: "m-\(key)", seq: 1, role: .assistant, text: "hi", timestamp: 99_999_999_999_999)))
        }
        #expect(fixture.state.buffers.keys == ["s1", "s2", "s3", "s4"])
    }

    @Test func closeRemovesTheBufferAndActivatesTheOneTakingItsNumber() {
        var fixture = fourBuffers()
        fixture.key(.alt("2"))
        fixture.type("/close", enter: true)
        #expect(fixture.state.buffers.keys == ["s1", "s3", "s4"] && fixture.state.activeKey == "s3")
        fixture.key(.alt("3"))
        fixture.type("/close", enter: true)
        #expect(fixture.state.activeKey == "s3", "the last one closed: the one before")
        fixture.type("/close", enter: true)
        fixture.type("/close", enter: true)
        #expect(fixture.state.buffers.isEmpty && fixture.state.activeKey == nil)
        fixture.type("/close", enter: true)
        #expect(fixture.state.notice == "no buffer to close")
    }

    @Test func eachBufferKeepsItsDraftAndInputHistory() {
        var fixture = fourBuffers()
        fixture.type("for one", enter: true)
        fixture.type("draft one")
        fixture.key(.control("n"))
        #expect(fixture.state.editor.isEmpty)
        fixture.type("for two", enter: true)
        fixture.key(.up)
        #expect(fixture.state.editor.text == "for two")
        fixture.key(.control("p"))
        #expect(fixture.state.editor.text == "draft one")
        fixture.keys(.control("a"), .control("k"), .up)
        #expect(fixture.state.editor.text == "for one")
    }

    @Test func theKillRingIsShared() {
        var fixture = fourBuffers()
        fixture.type("carry me")
        fixture.keys(.control("a"), .control("k"), .control("n"), .control("y"))
        #expect(fixture.state.editor.text == "carry me")
    }

    @Test func tabCompletesBackendsAndBufferNames() {
        var fixture = fourBuffers()
        fixture.type("/new co")
        fixture.key(.tab)
        #expect(fixture.state.editor.text == "/new codex ")
        fixture.keys(.control("a"), .control("k"))
        fixture.type("/buffer s")
        fixture.keys(.tab, .tab)
        #expect(fixture.state.editor.text == "/buffer s2 ")
    }
}
