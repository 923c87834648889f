import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import DiscoClawBridge

/// Answers that finish before the app has inserted their rows (a zero-delay backend, the relay's
/// own `/backend` reply) still reach it, however the app's insert and the relay's events interleave.
@Suite struct DiscoClawFastAnswerTests {
    /// What turn `index` says: every tenth is `/backend`, which the relay answers itself.
    static func text(_ index: Int) -> String { index % 10 == 9 ? "/backend" : "message \(index)" }

    static func expectShown(_ app: DiscoClawAppModel, _ answers: [(index: Int, id: String)], sourceLocation: SourceLocation = #_sourceLocation) {
        for (index, id) in answers {
            let row = app.rows[id]
            let expected = index % 10 == 9 ? "This conversation is answered by echo" : "echo: message \(index)"
            #expect(
                row?.status == "complete" && row?.content.hasPrefix(expected) == true,
                "turn \(index): \(String(describing: row))",
                sourceLocation: sourceLocation
            )
        }
    }

    @Test func fiftyInstantAnswersInARowAppearInAnAppThatInsertsAfterTheReply() throws {
        let bed = DiscoClawTestbed()
        let app = DiscoClawAppModel(try bed.register())
        let id = try app.device.createConversation()
        var answers: [(index: Int, id: String)] = []
        for index in 0..<50 {
            let answer = try app.send(Self.text(index), in: id)
            try app.readEvents()
            #expect(app.rows[answer] == nil && app.socket.readJSON().isEmpty, "nothing about the answer before the app can have its row")
            try app.insertRows()
            bed.afterHold()
            try app.readEvents()
            answers.append((index, answer))
            Self.expectShown(app, [(index, answer)])
        }
    }

    @Test func anAppSlowerThanTheHoldStillShowsEveryAnswer() throws {
        let bed = DiscoClawTestbed()
        let app = DiscoClawAppModel(try bed.register())
        let id = try app.device.createConversation()
        var answers: [(index: Int, id: String)] = []
        for index in 0..<50 {
            answers.append((index, try app.send(Self.text(index), in: id)))
            bed.afterHold()
            try app.readEvents()  // dropped: no row yet
            try app.insertRows()
            bed.afterAnnouncement()
            try app.readEvents()  // the conversation.updated: its /sync finds the answer
        }
        Self.expectShown(app, answers)
    }

    @Test func fiftyMessagesSentBackToBackAreAllShownWhicheverRowsTheAppHadInTime() throws {
        let bed = DiscoClawTestbed { $0.maxQueuedTurns = 50 }
        let app = DiscoClawAppModel(try bed.register())
        let id = try app.device.createConversation()
        var answers: [(index: Int, id: String)] = []
        for index in 0..<50 { answers.append((index, try app.send(Self.text(index), in: id))) }
        for _ in 0..<25 { try app.insertRows() }
        bed.afterHold()
        try app.readEvents()
        for _ in 25..<50 { try app.insertRows() }
        bed.afterAnnouncement()
        try app.readEvents()
        Self.expectShown(app, answers)
    }

    @Test func whileTheSendersAnswerIsHeldNoOtherEventMovesItsCursorPastIt() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let mac = try phone.addDevice()
        let socket = phone.socket()
        let (mine, theirs) = (try phone.createConversation("mine"), try mac.createConversation("theirs"))
        _ = socket.readJSON()
        let answer = try #require(phone.post("mine first", in: mine)["assistantMessageId"]?.stringValue)
        _ = try mac.post("theirs after", in: theirs)
        let live = socket.readJSON()
        #expect(live.of("message.complete").count == 1 && live.of("message.complete", answer).isEmpty, "the mac's answer goes at once")
        bed.afterHold()
        let released = socket.readJSON()
        let placeholder = try #require(released.of("message.complete", answer).first?["seq"]?.intValue)
        let cursor = (live + released).compactMap { $0["seq"]?.intValue }.max() ?? 0
        #expect(cursor == placeholder, "the app's cursor stops at the held answer's placeholder")
        bed.afterAnnouncement()
        #expect(socket.readJSON() == [.object(["type": .string("conversation.updated"), "conversationId": .string(mine)])])
        let synced = try #require(phone.sync(since: cursor)["messages"]?.arrayValue)
        #expect(synced.contains { $0["id"]?.stringValue == answer && $0["content"] == .string("echo: mine first") })
    }
}

extension DiscoClawTestbed {
    /// The test clock passes the time the sender's sockets hold an answer after its reply.
    func afterHold() { bed.advance(millis: Int64(downstream.settings.answerHoldMillis)) }

    /// The test clock passes the time after which an answer that ended while held is announced again.
    func afterAnnouncement() { bed.advance(millis: Int64(downstream.settings.answerAnnounceMillis - downstream.settings.answerHoldMillis)) }
}
