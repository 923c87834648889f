import ChatModel
import Testing

@Suite struct BufferListTests {
    private func listed() -> BufferList {
        var list = BufferList()
        list.addNew([
            session("old-claude", backend: "claude", updatedAt: 100), session("codex-1", backend: "codex", updatedAt: 900),
            session("new-claude", backend: "Claude", updatedAt: 500), session("loose", backend: nil, updatedAt: 999),
            session("b-tie", backend: "claude", updatedAt: 100), session("alpha", backend: "alpha", updatedAt: 1),
        ])
        return list
    }

    @Test func groupedByBackendNameThenNewestFirst() {
        let list = listed()
        #expect(list.keys == ["alpha", "new-claude", "b-tie", "old-claude", "codex-1", "loose"])
        #expect(list.number(of: "new-claude") == 2)
        #expect(list.key(number: 5) == "codex-1")
        #expect(list.key(number: 7) == nil && list.key(number: 0) == nil)
        #expect(list.groups.map(\.backend) == ["alpha", "Claude", "codex", nil], "groups ignore case; the header is the first buffer's spelling")
        #expect(list.groups[1].buffers.map(\.number) == [2, 3, 4])
    }

    @Test func laterBuffersGoToTheEndOfTheirGroupSoNumbersStay() {
        var list = listed()
        list.addNew([session("newest-claude", backend: "claude", updatedAt: 10_000), session("old-claude", updatedAt: 20_000)])
        #expect(list.keys == ["alpha", "new-claude", "b-tie", "old-claude", "newest-claude", "codex-1", "loose"])
        list.add(ChatBuffer(session: session("b1", backend: "beta")))
        #expect(
            list.keys == ["alpha", "b1", "new-claude", "b-tie", "old-claude", "newest-claude", "codex-1", "loose"],
            "a new backend's group goes where its name sorts"
        )
        list.add(ChatBuffer(session: session("z", backend: "zeta")))
        #expect(list.keys.suffix(2) == ["z", "loose"])
    }

    @Test func closingRemovesTheBufferAndListsDoNotBringItBack() {
        var list = listed()
        #expect(list.close("b-tie") == 2)
        #expect(list.keys == ["alpha", "new-claude", "old-claude", "codex-1", "loose"])
        #expect(list.number(of: "codex-1") == 4)
        list.addNew([session("b-tie")])
        #expect(list["b-tie"] == nil)
        list.add(ChatBuffer(session: session("b-tie")))
        #expect(list.number(of: "b-tie") == 4, "reopened (activity): at the end of its group")
        #expect(!list.closedKeys.contains("b-tie"))
    }

    @Test func neighboursWrapRound() {
        let list = listed()
        #expect(list.neighbour(of: "loose", offset: 1) == "alpha")
        #expect(list.neighbour(of: "alpha", offset: -1) == "loose")
        #expect(list.neighbour(of: "alpha", offset: 1) == "new-claude")
        #expect(list.neighbour(of: nil, offset: 1) == "alpha")
        #expect(BufferList().neighbour(of: nil, offset: 1) == nil)
    }

    @Test func nameMatchesExactlyThenByPrefixAfterTheCurrentOne() {
        var list = listed()
        list.update("codex-1") { $0.displayName = "Claude notes" }
        #expect(list.match(name: "CODEX-1", after: nil) == "codex-1", "the key matches too")
        #expect(list.match(name: "old-claude", after: nil) == "old-claude")
        #expect(list.match(name: "new", after: nil) == "new-claude")
        #expect(list.match(name: "claude", after: nil) == "codex-1")
        #expect(list.match(name: "b", after: "b-tie") == "b-tie")
        #expect(list.match(name: "nothing", after: nil) == nil)
    }
}

@Suite struct HotlistTests {
    @Test func keepsArrivalOrderAndAltAPrefersMessages() {
        var hotlist = Hotlist()
        hotlist.record("a", level: .low)
        hotlist.record("b", level: .message)
        hotlist.record("c", level: .message)
        #expect(hotlist.entries.map(\.key) == ["a", "b", "c"])
        #expect(hotlist.next == "b")
        hotlist.record("a", level: .message)
        #expect(hotlist.entries.map(\.key) == ["a", "b", "c"], "raising a level keeps the place")
        #expect(hotlist.next == "a")
        hotlist.record("a", level: .low)
        #expect(hotlist.level(of: "a") == .message, "recording never lowers")
        hotlist.lower("a", to: .low)
        #expect(hotlist.level(of: "a") == .low)
        hotlist.remove("b")
        hotlist.remove("c")
        #expect(hotlist.next == "a")
        hotlist.remove("a")
        #expect(hotlist.next == nil)
    }
}
