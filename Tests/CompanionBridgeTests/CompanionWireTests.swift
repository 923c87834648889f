import RelayCore
import Testing

@testable import CompanionBridge

@Suite struct ParagraphChunkerTests {
    @Test func wholeParagraphsGoOutOnceAndTheRestAtTheEnd() {
        var chunker = ParagraphChunker()
        #expect(chunker.take("Hel", final: false).isEmpty, "an unfinished paragraph waits")
        #expect(chunker.take("Hello\n\nWor", final: false).map(\.content) == ["Hello"])
        #expect(chunker.take("Hello\n\nWorld\n\n\n\nBye", final: false).map(\.content) == ["World"], "empty paragraphs are never sent")
        let last = chunker.take("Hello\n\nWorld\n\n\n\nBye", final: true)
        #expect(last.map(\.content) == ["Bye"])
        #expect(last.map(\.id) == ["chunk-2"])
        #expect(chunker.nextChunkID() == "chunk-3")
    }

    @Test func anAnswerWithoutBreaksIsOneChunkAtTheEnd() {
        var chunker = ParagraphChunker()
        #expect(chunker.take("echo: a b", final: false).isEmpty)
        #expect(chunker.take("echo: a b c", final: true).map(\.content) == ["echo: a b c"])
        #expect(chunker.take("   \n\n", final: true).isEmpty)
    }
}

@Suite struct CompanionRequestTests {
    func parse(_ text: String) -> Result<CompanionRequest, CompanionError> { CompanionRequest.parse(Array(text.utf8)) }

    @Test func envelopesAndTheAppsBareBackgroundingFrame() throws {
        let enveloped = try parse(#"{"type":"claudeCommand","requestId":"R","data":{"command":"hi"}}"#).get()
        #expect(enveloped.type == "claudeCommand" && enveloped.requestID == "R" && enveloped.string("command") == "hi")
        let bare = try parse(#"{"type":"client_backgrounding","sessionId":"s1","timestamp":"2025-08-05T17:03:12Z"}"#).get()
        #expect(bare.requestID == nil && bare.string("sessionId") == "s1")
        let nullID = try parse(#"{"type":"ping","requestId":null}"#).get()
        #expect(nullID.requestID == nil && nullID.data.isEmpty)
    }

    @Test func badFramesAreInvalidMessages() {
        for text in ["not json", "[1]", #"{"data":{}}"#, #"{"type":""}"#, #"{"type":"ping","requestId":7}"#, #"{"type":"ping","data":[1]}"#] {
            guard case .failure(let error) = parse(text) else {
                Issue.record("\(text) was accepted")
                continue
            }
            #expect(error.code == "INVALID_MESSAGE")
        }
    }

    @Test func typedFieldAccess() throws {
        let request = try parse(#"{"type":"x","data":{"n":1,"s":"v"}}"#).get()
        #expect(throws: CompanionError.self) { try request.optionalString("n") }
        #expect(throws: CompanionError.self) { try request.requiredString("missing") }
        #expect(try request.requiredString("s") == "v")
    }
}

@Suite struct CompanionWireTests {
    @Test func timestampsAreWhatJavaScriptToISOStringWrites() {
        #expect(CompanionWire.timestamp(0) == "1970-01-01T00:00:00.000Z")
        #expect(CompanionWire.timestamp(1_754_413_392_345) == "2025-08-05T17:03:12.345Z")
    }

    @Test func framesCarryTypeRequestIDTimestampAndData() throws {
        let frame = try #require(JSONValue.parse(CompanionWire.frame("pong", at: 0, ["serverTime": .string("t")])))
        #expect(frame["type"] == .string("pong") && frame["requestId"] == .null && frame["timestamp"] == .string("1970-01-01T00:00:00.000Z"))
        let error = try #require(JSONValue.parse(CompanionWire.error(.invalidSession("s9"), requestID: "R", at: 0)))
        #expect(error["data"]?["code"] == .string("INVALID_SESSION") && error["error"]?["code"] == .string("INVALID_SESSION"))
        #expect(error["data"]?["sessionId"] == .string("s9") && error["data"]?["details"] == .object([:]))
    }
}

@Suite struct CompanionSessionsTests {
    @Test func aLimitOneSessionPerDirectoryAndIdleExpiry() {
        var sessions = CompanionSessions(maxSessions: 2, idleMillis: 1_000, backgroundIdleMillis: 5_000)
        let a = CompanionSessions.Session(sessionID: "a", conversationID: "cv_a", workingDirectory: "/p/a", createdAt: 0, lastActivity: 0)
        let b = CompanionSessions.Session(sessionID: "b", conversationID: "cv_b", workingDirectory: "/p/b", createdAt: 0, lastActivity: 0)
        let c = CompanionSessions.Session(sessionID: "c", conversationID: "cv_c", workingDirectory: "/p/c", createdAt: 0, lastActivity: 0)
        let added = [sessions.add(a), sessions.add(b), sessions.add(c), sessions.add(a)]
        #expect(added == [true, true, false, true], "the limit holds; a live session is kept as it is")
        #expect(sessions.session(directory: "/p/b")?.sessionID == "b")
        sessions.setBackgrounded("b", true, at: 0)
        let first = sessions.expire(now: 2_000, isBusy: { _ in false })
        #expect(first.map(\.sessionID) == ["a"], "background sessions idle longer")
        let busy = sessions.expire(now: 6_000, isBusy: { $0 == "cv_b" })
        #expect(busy.isEmpty, "a busy session stays")
        let last = sessions.expire(now: 6_000, isBusy: { _ in false })
        #expect(last.map(\.sessionID) == ["b"])
    }
}
