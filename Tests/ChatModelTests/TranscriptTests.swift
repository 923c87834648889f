import ChatModel
import Testing

@Suite struct TranscriptTests {
    private func message(_ id: String, _ seq: Int64?, _ text: String = "x", role: ChatRole = .assistant, clientID: String? = nil) -> ChatMessage {
        ChatMessage(id: id, seq: seq, role: role, text: text, timestamp: 1_000 * (seq ?? 0), clientID: clientID)
    }

    @Test func aStreamingAnswerIsOneEntryUntilItsFinalReplacesIt() {
        var transcript = Transcript()
        transcript.apply(message("q", 1, "question", role: .user))
        #expect(transcript.stream(id: "a", text: "Hel", timestamp: 5) == .added)
        #expect(transcript.stream(id: "a", text: "Hello", timestamp: 6) == .updated)
        #expect(transcript.stream(id: "a", text: "Hello", timestamp: 6) == .unchanged)
        #expect(transcript.lines.map(\.text) == ["question", "Hello"])
        #expect(transcript.lines[1].isStreaming)
        #expect(transcript.isStreaming)
        #expect(transcript.apply(message("a", 2, "Hello world")) == .updated)
        #expect(transcript.lines.map(\.text) == ["question", "Hello world"])
        #expect(transcript.lines[1].state == .final && transcript.lines[1].seq == 2)
        #expect(transcript.stream(id: "a", text: "Hel", timestamp: 7) == .unchanged, "a late update never overwrites the final text")
        #expect(transcript.lines.map(\.text) == ["question", "Hello world"])
        #expect(transcript.newestSeq == 2)
    }

    @Test func linesAreOrderedBySeqWhateverOrderTheyCome() {
        var transcript = Transcript()
        for seq: Int64 in [3, 1, 2, 5, 4] { transcript.apply(message("m\(seq)", seq)) }
        #expect(transcript.lines.compactMap(\.seq) == [1, 2, 3, 4, 5])
    }

    @Test func historyMergesByIDWithoutDuplicates() {
        var transcript = Transcript()
        for seq: Int64 in 4...6 { transcript.apply(message("m\(seq)", seq)) }
        #expect(transcript.merge(history: (1...6).map { message("m\($0)", Int64($0)) }) == 3)
        #expect(transcript.merge(history: (1...6).reversed().map { message("m\($0)", Int64($0)) }) == 0)
        #expect(transcript.lines.map(\.id) == (1...6).map { "m\($0)" })
    }

    @Test func theServersCopyReplacesTheLocalEcho() {
        var transcript = Transcript()
        transcript.apply(message("m1", 1))
        transcript.appendPending(clientID: "t-1", text: "hi", timestamp: 9)
        transcript.stream(id: "a", text: "answer so far", timestamp: 10)
        #expect(transcript.lines.map(\.state) == [.final, .pending, .streaming])
        transcript.apply(message("m2", 2, "hi", role: .user, clientID: "t-1"))
        #expect(transcript.lines.map(\.id) == ["m1", "m2", "a"], "confirmed, it takes its seq; the answer still streams below")
        var reloaded = Transcript()
        reloaded.appendPending(clientID: "t-9", text: "sent while offline", timestamp: 1)
        reloaded.merge(history: [message("m7", 7, "sent while offline", role: .user)])
        #expect(reloaded.lines.map(\.id) == ["m7"], "a history page without client ids confirms the echo by its text")
    }

    @Test func interruptedAnswersGiveWayToTheHistory() {
        var transcript = Transcript()
        transcript.apply(message("m1", 1))
        transcript.stream(id: "a", text: "half an ans", timestamp: 2)
        transcript.stream(id: "b", text: "lost", timestamp: 3)
        transcript.interruptStreams()
        #expect(transcript.lines.map(\.state) == [.final, .interrupted, .interrupted])
        #expect(!transcript.isStreaming)
        transcript.merge(history: [message("m1", 1), message("a", 2, "half an answer, finished")])
        #expect(transcript.lines.map(\.text) == ["x", "half an answer, finished"])
        #expect(transcript.lines.map(\.state) == [.final, .final])
    }

    @Test func localLinesStayAfterTheLinesTheyFollowed() {
        var transcript = Transcript()
        transcript.apply(message("m5", 5))
        transcript.appendLocal(role: .system, text: "help text", timestamp: 1)
        transcript.apply(message("m6", 6))
        transcript.merge(history: [message("m1", 1), message("m2", 2)])
        #expect(transcript.lines.map(\.text) == ["x", "x", "x", "help text", "x"])
        #expect(transcript.lines.map(\.id) == ["m1", "m2", "m5", "local-1", "m6"])
    }

    @Test func localLinesBelowAWaitingAnswerSettleWhenANewerMessageComes() {
        var transcript = Transcript()
        transcript.apply(message("m1", 1))
        transcript.stream(id: "a", text: "partial", timestamp: 2)
        transcript.appendLocal(role: .error, text: "backend failed", timestamp: 3)
        #expect(transcript.lines.map(\.id) == ["m1", "a", "local-2"], "the error shows below the answer it ended")
        transcript.apply(message("a", 2, "finished anyway"))
        #expect(transcript.lines.map(\.id) == ["m1", "a", "local-2"])
        transcript.apply(message("m3", 3))
        #expect(transcript.lines.map(\.id) == ["m1", "a", "local-2", "m3"], "settled before the newer message")
        #expect(transcript.lines[2].order == LineOrder(seq: 2, local: 2))
    }
}
