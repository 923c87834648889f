import Testing

@testable import CompanionBridge

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
