import CompanionWire
import RelayCore
import Testing

@testable import CompanionBridge

@Suite struct CompanionTurnBookTests {
    typealias F = TurnBookFixture

    @Test(arguments: ["streamStarted", "streamStart"])
    func aTurnOpensItsSessionThenRunsAsACommand(replyType: String) throws {
        var f = F()
        let started = f.start("t1", "hello", in: "/p/app")
        #expect(F.events(started) == ["t1": [.typing(true)]])
        let start = try #require(F.sent(started).first)
        #expect(start["type"] == .string("streamStart"))
        #expect(start["requestId"] == .string("r1"))
        #expect(start["data"]?["workingDirectory"] == .string("/p/app"))
        #expect(start["data"]?["sessionId"]?.stringValue.map(Identifiers.isUUIDv4) == true, "a session id of our own, as the real server needs")

        let reply = try f.receive(raw: #"{"type":"\#(replyType)","requestId":"r1","timestamp":"t","data":{"success":true,"sessionId":"s1"}}"#)
        let frames = F.sent(reply)
        #expect(frames.map { $0["type"]?.stringValue } == ["subscribe", "claudeCommand"])
        #expect(frames[0]["data"]?["sessionIds"] == .array([.string("s1")]))
        #expect(frames[1]["data"] == .object(["command": .string("hello"), "projectPath": .string("/p/app"), "sessionId": .string("s1")]))
        let commandID = try #require(frames[1]["requestId"]?.stringValue)

        #expect(F.events(f.chunk("s1", "First.")) == ["t1": [.progress("First.")]])
        #expect(F.events(f.chunk("s1", "Second.")) == ["t1": [.progress("First.\n\nSecond.")]])
        #expect(f.chunk("s1", "", type: "complete").isEmpty)
        let answer =
            #"{"type":"claudeResponse","requestId":"\#(commandID)","timestamp":"t","data":{"content":"First.\n\nSecond.","success":true,"sessionId":"s1","error":null}}"#
        #expect(F.events(try f.receive(raw: answer)) == ["t1": [.final("First.\n\nSecond.")]])
        #expect(f.book.count == 0)
    }

    @Test func theSessionIsReusedPerDirectoryAndSubscribedOnce() throws {
        var f = F()
        _ = try f.run("t1", session: "s1")
        let second = f.start("t2", in: "/p/app")
        #expect(F.types(second) == ["claudeCommand"])
        #expect(F.sent(second).first?["data"]?["sessionId"] == .string("s1"))
        #expect(F.types(f.start("t3", in: "/p/other")) == ["streamStart"])
    }

    @Test func turnsWaitingForOneDirectoryShareOneStreamStart() {
        var f = F()
        #expect(F.types(f.start("t1", "one")) == ["streamStart"])
        #expect(F.types(f.start("t2", "two")).isEmpty)
        let reply = f.receive(.sessionStarted(requestID: "r1", sessionID: "s1"))
        #expect(F.types(reply) == ["subscribe", "claudeCommand", "claudeCommand"])
        #expect(F.sent(reply).compactMap { $0["data"]?["command"]?.stringValue } == ["one", "two"])
    }

    @Test func chunksGoToTheOldestRunningTurnOfTheirSession() throws {
        var f = F()
        let first = try f.run("t1", session: "s1")
        let second = try #require(F.sent(f.start("t2")).first?["requestId"]?.stringValue)
        _ = try f.run("t3", session: "s2", in: "/p/other")
        #expect(F.events(f.chunk("s1", "a")) == ["t1": [.progress("a")]])
        #expect(F.events(f.chunk("s2", "x")) == ["t3": [.progress("x")]])
        #expect(F.events(f.answer(first, "a")) == ["t1": [.final("a")]])
        #expect(F.events(f.chunk("s1", "b")) == ["t2": [.progress("b")]], "t2's text starts afresh")
        #expect(F.events(f.answer(second, "b")) == ["t2": [.final("b")]])
    }

    @Test func queuedChunksAndUnknownSessionsAreDropped() throws {
        var f = F()
        _ = try f.run("t1", session: "s1")
        #expect(f.chunk("s1", "from an earlier connection", queued: true).isEmpty)
        #expect(f.chunk("nobody", "stray").isEmpty)
        #expect(f.chunk("s1", "tool", type: "tool_use").isEmpty)
        #expect(F.events(f.chunk("s1", "mine")) == ["t1": [.progress("mine")]])
    }

    @Test func failuresInBothForms() throws {
        var f = F()
        let first = try f.run("t1", session: "s1")
        let second = try #require(F.sent(f.start("t2")).first?["requestId"]?.stringValue)
        let refused =
            #"{"type":"error","requestId":"\#(first)","timestamp":"t","error":{"code":"COMMAND_FAILED","message":"AICLI Code execution failed"}}"#
        #expect(F.events(try f.receive(raw: refused)) == ["t1": [.failed("AICLI Code execution failed (COMMAND_FAILED)")]])
        let response = f.receive(.response(requestID: second, .failure("backend down", sessionID: nil)))
        #expect(F.events(response) == ["t2": [.failed("backend down")]])
        #expect(f.receive(.error(requestID: nil, code: "COMMAND_FAILED", message: "someone else's")).isEmpty)
        #expect(f.book.count == 0)
    }

    @Test func anInvalidSessionIsOpenedAgainOnce() throws {
        var f = F()
        let command = try f.run("t1", session: "s1")
        let retry = f.receive(.error(requestID: command, code: "INVALID_SESSION", message: "gone"))
        #expect(F.types(retry) == ["streamStart"])
        let startID = try #require(F.sent(retry).first?["requestId"]?.stringValue)
        let again = F.sent(f.receive(.sessionStarted(requestID: startID, sessionID: "s2")))
        #expect(again.map { $0["type"]?.stringValue } == ["subscribe", "claudeCommand"])
        #expect(again[1]["data"]?["sessionId"] == .string("s2"))
        let secondCommand = try #require(again[1]["requestId"]?.stringValue)
        let failed = f.receive(.error(requestID: secondCommand, code: "INVALID_SESSION", message: "gone again"))
        #expect(F.events(failed) == ["t1": [.failed("gone again (INVALID_SESSION)")]])
    }

    @Test func aRefusedStreamStartFailsEveryTurnWaitingForIt() {
        var f = F()
        _ = f.start("t1")
        _ = f.start("t2")
        _ = f.start("t3", in: "/p/other")
        let refused = f.receive(.error(requestID: "r1", code: "INVALID_WORKING_DIRECTORY", message: "outside projects_root"))
        let reason = TurnEvent.failed("the server could not start a session: outside projects_root (INVALID_WORKING_DIRECTORY)")
        #expect(F.events(refused) == ["t1": [reason], "t2": [reason]])
        #expect(f.book.count == 1)
        #expect(
            F.events(f.receive(.sessionStarted(requestID: "r2", sessionID: nil))) == ["t3": [.failed("the server started a session without an id")]]
        )
    }

    @Test func cancelledTurnsSayNothingButStillClaimTheirChunks() throws {
        var f = F()
        let first = try f.run("t1", session: "s1")
        let second = try #require(F.sent(f.start("t2")).first?["requestId"]?.stringValue)
        f.book.cancel("t1", now: f.now)
        #expect(f.chunk("s1", "t1's output").isEmpty)
        #expect(f.answer(first, "t1's answer").isEmpty)
        #expect(F.events(f.chunk("s1", "t2's output")) == ["t2": [.progress("t2's output")]])
        #expect(F.events(f.answer(second, "done")) == ["t2": [.final("done")]])
    }

    @Test func aTurnCancelledBeforeItsSessionIsGone() {
        var f = F()
        _ = f.start("t1")
        f.book.cancel("t1", now: f.now)
        #expect(f.book.count == 0)
        #expect(f.receive(.sessionStarted(requestID: "r1", sessionID: "s1")).isEmpty)
        #expect(F.types(f.start("t2")) == ["subscribe", "claudeCommand"], "the session was still cached")
    }

    @Test func aDroppedLinkFailsLiveTurnsAndForgetsSessions() throws {
        var f = F()
        _ = try f.run("t1", session: "s1")
        _ = f.start("t2", in: "/p/other")
        #expect(F.types(f.start("t3")) == ["claudeCommand"])
        f.book.cancel("t3", now: f.now)
        let down = f.book.linkDown(reason: "the link to up dropped")
        #expect(F.events(down) == ["t1": [.failed("the link to up dropped")], "t2": [.failed("the link to up dropped")]])
        #expect(f.book.count == 0)
        #expect(F.types(f.start("t4")) == ["streamStart"])
    }

    @Test func turnsAreBounded() {
        var limits = CompanionTurnBook.Limits()
        limits.maxTurns = 2
        var f = F(limits: limits)
        _ = f.start("t1")
        _ = f.start("t2")
        let third = f.start("t3")
        #expect(F.types(third).isEmpty)
        #expect(F.events(third) == ["t3": [.failed("2 turns are already waiting on this server")]])
    }

    @Test func anUnansweredStreamStartExpiresAndForgottenTurnsAreDropped() throws {
        var f = F()
        _ = try f.run("t1", session: "s1")
        f.book.cancel("t1", now: f.now)
        _ = f.start("t2", in: "/p/other")
        #expect(f.book.expire(now: f.now + 29_999).isEmpty)
        let expired = f.book.expire(now: f.now + 30_000)
        #expect(F.events(expired) == ["t2": [.failed("the server did not answer streamStart within 30 s")]])
        #expect(f.book.count == 1)
        _ = f.book.expire(now: f.now + 10 * 60 * 1000)
        #expect(f.book.count == 0)
    }

    @Test func withoutADirectoryTheServerPicks() throws {
        var f = F()
        let started = F.sent(f.start("t1", in: ""))
        #expect(started.first?["data"]?["workingDirectory"] == nil)
        let command = F.sent(f.receive(.sessionStarted(requestID: "r1", sessionID: "s0"))).last
        #expect(command?["data"] == .object(["command": .string("hi"), "sessionId": .string("s0")]))
        #expect(F.types(f.start("t2", in: nil)) == ["claudeCommand"])
    }

    @Test func anEmptyAnswerFallsBackToTheStreamedText() throws {
        var f = F()
        let command = try f.run("t1", session: "s1")
        _ = f.chunk("s1", "streamed")
        #expect(F.events(f.answer(command, "")) == ["t1": [.final("streamed")]])
    }

    @Test func anIdleSessionIsOpenedAgain() throws {
        var f = F()
        let command = try f.run("t1", session: "s1")
        _ = f.answer(command, "ok")
        f.now += 10 * 60 * 1000
        #expect(F.types(f.start("t2")) == ["streamStart"])
    }
}
