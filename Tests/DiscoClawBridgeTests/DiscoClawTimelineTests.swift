import DiscoClawWire
import RelayCore
import Testing

@testable import DiscoClawBridge

/// The REST side's pure rules: routes, query arguments, the sync cursor, reads and live rows.
@Suite struct DiscoClawTimelineTests {
    func entry(_ id: String, seq: Int64, status: TimelineEntry.Status = .complete, conversation: String = "c1") -> TimelineEntry {
        TimelineEntry(id: id, conversationID: conversation, role: .assistant, content: "", status: status, seq: seq, createdAt: 1)
    }

    func conversation(_ id: String, changeSeq: Int64) -> Conversation {
        var conversation = Conversation(id: id, userID: "u1", createdAt: 1, updatedAt: 1)
        conversation.changeSeq = changeSeq
        return conversation
    }

    @Test func routesNameWhatThePathSays() {
        #expect(DiscoClawRoute(method: "GET", path: "/health") == .health)
        #expect(DiscoClawRoute(method: "DELETE", path: "/auth/devices/d%201") == .removeDevice("d 1"))
        #expect(DiscoClawRoute(method: "POST", path: "/conversations/c1/messages/") == .postMessage("c1"))
        #expect(DiscoClawRoute(method: "PATCH", path: "/conversations/c1") == .updateConversation("c1"))
        #expect(DiscoClawRoute(method: "PUT", path: "/conversations/c1") == nil)
        #expect(DiscoClawRoute(method: "GET", path: "/conversations/x/y/z") == nil)
        #expect(DiscoClawRoute.register.isPublic && !DiscoClawRoute.sync.isPublic)
    }

    @Test func queryIntegersAndPageLimits() {
        #expect(DiscoClawTimeline.integer("since", nil) == .success(nil) && DiscoClawTimeline.integer("since", "") == .success(nil))
        #expect(DiscoClawTimeline.integer("since", "42") == .success(42))
        #expect(DiscoClawTimeline.integer("before", "-1") == .failure(.badQuery(name: "before")))
        #expect(DiscoClawTimeline.integer("limit", "1.5") == .failure(.badQuery(name: "limit")))
        #expect([nil, 0, 7, 1_000].map(DiscoClawTimeline.pageLimit) == [50, 1, 7, 200])
    }

    @Test func theCursorIsTheLastMessageOrTheNewestChangeAndNeverGoesBack() {
        let messages = [entry("a", seq: 11), entry("b", seq: 12)]
        #expect(
            DiscoClawTimeline.cursor(since: 10, TimelineSync(entries: messages, more: false, conversations: [conversation("c1", changeSeq: 15)]))
                == 15
        )
        #expect(
            DiscoClawTimeline.cursor(since: 10, TimelineSync(entries: messages, more: true, conversations: [conversation("c1", changeSeq: 15)]))
                == 12,
            "a cut answer goes on from its last message"
        )
        #expect(DiscoClawTimeline.cursor(since: 10, TimelineSync(entries: [], more: false, conversations: [conversation("c1", changeSeq: 3)])) == 10)
        #expect(DiscoClawTimeline.cursor(since: 10, TimelineSync(entries: [], more: false, conversations: [])) == 10)
    }

    @Test func whatWasFetchedCompleteIsRead() {
        let marks = DiscoClawTimeline.readMarks([
            entry("a", seq: 3), entry("b", seq: 5), entry("p", seq: 6, status: .pending), entry("x", seq: 4, conversation: "c2"),
            entry("e", seq: 9, status: .error, conversation: "c2"),
        ])
        #expect(marks == ["c1": 5, "c2": 4])
    }

    @Test func placeholdersOfRunningAnswersShowTheirTextSoFar() {
        let turn = TurnRef(runID: "r", deviceID: "d", clientID: "c")
        let running = [
            TurnProgress(turn: turn, eventID: "p1", conversationID: "c1", content: "Once", startedAt: 5, seq: 6),
            TurnProgress(turn: turn, eventID: "p2", conversationID: "c1", content: "", startedAt: 0, seq: 7),
        ]
        let entries = [entry("a", seq: 3), entry("p1", seq: 6, status: .pending), entry("p2", seq: 7, status: .pending)]
        let live = DiscoClawTimeline.live(entries) { running }
        #expect(live.map(\.status) == [.complete, .streaming, .pending], "an answer not started yet stays pending")
        #expect(live[1].content == "Once")
        var asked = false
        _ = DiscoClawTimeline.live([entry("a", seq: 3)]) {
            asked = true
            return running
        }
        #expect(!asked, "no placeholder, no look at the running turns")
    }
}
