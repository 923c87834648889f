import ClawlineWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import ClawlineBridge

/// Replay on `auth` over the listener in memory: the cursor, the cap and `replayTruncated`,
/// `historyReset`, stored events only, and what each device of a user gets.
@Suite struct ClawlineReplayTests {
    typealias Bed = ClawlineTestbed

    func bed(maxReplay: Int = 500, backends: [any Backend] = [ScriptedBackend.echo()]) -> Bed {
        var settings = ClawlineSettings()
        settings.maxReplayMessages = maxReplay
        return Bed(settings: settings, backends: backends)
    }

    /// `count` exchanges; the stored events in order (user echo, assistant final, …).
    func history(_ socket: TestSocket, _ count: Int) -> [JSONValue] {
        (0..<count).flatMap { index in
            socket.exchange(Bed.message("history \(index)")).filter { $0.type == "message" && $0["streaming"] == .bool(false) }
        }
    }

    func ids(_ frames: [JSONValue]) -> [String] { frames.compactMap { $0["id"]?.stringValue } }

    func expectWindow(_ session: Bed.Session, count: Int, truncated: Bool, reset: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        let result = session.result
        #expect(result["replayCount"] == .int(Int64(count)), "\(result)", sourceLocation: sourceLocation)
        #expect(result["replayTruncated"] == .bool(truncated) && result["historyReset"] == .bool(reset), "\(result)", sourceLocation: sourceLocation)
        #expect(session.after.count == count && session.after.allSatisfy { $0.type == "message" && $0["streaming"] == .bool(false) })
    }

    /// Nothing of the replay comes again live.
    func expectNoMoreReplay(_ session: Bed.Session, sourceLocation: SourceLocation = #_sourceLocation) {
        let live = session.socket.exchange(Bed.message("live after replay"))
        #expect(Set(ids(live)).isDisjoint(with: ids(session.after)), sourceLocation: sourceLocation)
        #expect(live.finals == ["echo: live after replay"], sourceLocation: sourceLocation)
    }

    @Test func aReplayAfterTheCursorIsInOrderAndComesOnce() throws {
        let bed = bed()
        let (admin, socket) = try bed.setupAdmin()
        let events = history(socket, 3)
        socket.close()
        let session = try bed.connect(admin, cursor: events[1]["id"])
        expectWindow(session, count: 4, truncated: false, reset: false)
        #expect(session.after == Array(events[2...]), "the same frames as live")
        let echo = try #require(session.after.first { $0.isUserEcho })
        #expect(echo["deviceId"]?.stringValue == admin.deviceID && echo["timestamp"]?.intValue != nil)
        expectNoMoreReplay(session)
    }

    @Test func aReplayFromTheLatestEventIsEmpty() throws {
        let bed = bed()
        let (admin, socket) = try bed.setupAdmin()
        let events = history(socket, 2)
        socket.close()
        let session = try bed.connect(admin, cursor: events.last?["id"])
        expectWindow(session, count: 0, truncated: false, reset: false)
        expectNoMoreReplay(session)
    }

    @Test func aReplayIsCappedToTheNewestEvents() throws {
        let bed = bed(maxReplay: 3)
        let (admin, socket) = try bed.setupAdmin()
        let events = history(socket, 3)
        socket.close()
        let within = try bed.connect(admin, cursor: events[2]["id"])
        expectWindow(within, count: 3, truncated: false, reset: false)
        #expect(within.after == Array(events[3...]))
        within.socket.close()
        let capped = try bed.connect(admin, cursor: events[0]["id"])
        expectWindow(capped, count: 3, truncated: true, reset: false)
        #expect(capped.after == Array(events[3...]), "the newest")
        expectNoMoreReplay(capped)
    }

    @Test(arguments: [(3, true), (500, false)])
    func anUnknownCursorReplaysTheTailWithHistoryReset(_ cap: Int, _ truncated: Bool) throws {
        let bed = bed(maxReplay: cap)
        let (admin, socket) = try bed.setupAdmin()
        let events = history(socket, 3)
        socket.close()
        let session = try bed.connect(admin, cursor: .string("s_\(UUID())"))
        expectWindow(session, count: min(cap, 6), truncated: truncated, reset: true)
        #expect(session.after == Array(events.suffix(cap)))
    }

    @Test func anAbsentOrNullCursorReplaysTheTail() throws {
        let bed = bed()
        let (admin, socket) = try bed.setupAdmin()
        let events = history(socket, 2)
        socket.close()
        for cursor in [nil, JSONValue.null] {
            let session = try bed.connect(admin, cursor: cursor)
            expectWindow(session, count: 4, truncated: false, reset: true)
            #expect(session.after == events)
            session.socket.close()
        }
    }

    @Test(arguments: ["", "   "])
    func anEmptyCursorIsInvalid(_ cursor: String) throws {
        let bed = bed()
        let admin = try bed.pairFirstAdmin()
        let socket = bed.harness.connect()
        #expect(socket.exchange(Bed.auth(admin, cursor: .string(cursor))).errorCodes == ["invalid_message"])
    }

    @Test func aSiblingGetsTheUsersHistoryAndAStrangerNone() throws {
        let bed = bed()
        let (admin, adminSocket) = try bed.setupAdmin()
        let sibling = try bed.pairAndApprove(via: adminSocket, userID: admin.userID)
        let stranger = try bed.pairAndApprove(via: adminSocket)
        let events = history(adminSocket, 2)
        let mine = try bed.connect(sibling, cursor: .null)
        expectWindow(mine, count: 4, truncated: false, reset: true)
        #expect(mine.after == events)
        let theirs = try bed.connect(stranger, cursor: .null)
        expectWindow(theirs, count: 0, truncated: false, reset: true)
    }

    @Test func aReplayLeavesOutAStreamInFlightWhichFollowsLive() throws {
        let backend = ScriptedBackend(name: "slow")
        let bed = bed(backends: [backend])
        let (admin, adminSocket) = try bed.setupAdmin()
        let sibling = try bed.pairAndApprove(via: adminSocket, userID: admin.userID)
        _ = adminSocket.exchange(Bed.message("finished"))
        backend.runs[0].emit(.final("echo: finished"))
        bed.bed.settle()
        let done = adminSocket.readJSON().filter { $0.isAssistantFinal }
        _ = adminSocket.exchange(Bed.message("in flight"))
        backend.runs[1].emit(.progress("echo: in"))
        bed.bed.settle()
        let update = try #require(adminSocket.readJSON().first { $0.isStreamUpdate })

        let session = try bed.connect(sibling, cursor: .null)
        #expect(session.result["replayCount"] == .int(3), "echo and final of the first, the echo of the second")
        let replayed = Array(session.after.prefix(3))
        #expect(replayed.map { $0["content"]?.stringValue } == ["finished", "echo: finished", "in flight"] && replayed[1] == done.first)
        #expect(!ids(replayed).contains(update["id"]?.stringValue ?? ""))
        let snapshot = try #require(session.after.dropFirst(3).first)
        #expect(snapshot.isStreamUpdate && snapshot["id"] == update["id"] && snapshot["content"]?.stringValue == "echo: in", "what it has so far")
        backend.runs[1].emit(.final("echo: in flight"))
        bed.bed.settle()
        let live = session.socket.readJSON()
        #expect(live.finals == ["echo: in flight"] && live.first { $0.isAssistantFinal }?["id"] == update["id"])
    }
}
