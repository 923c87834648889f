import DiscoClawWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import DiscoClawBridge

/// Messages and their answers: the `POST`, what the sockets stream, paging and `/sync`, in memory.
@Suite struct DiscoClawMessageTests {
    /// A bed whose backend's turns the test drives (`backend.runs`).
    func driven(configure: (inout DiscoClawSettings) -> Void = { _ in }) -> (DiscoClawTestbed, ScriptedBackend) {
        let backend = ScriptedBackend(name: "driven")
        return (DiscoClawTestbed(backends: [backend], configure: configure), backend)
    }

    @Test func aTurnIsAnsweredByItsPostThenStreamsToTheSendersSocket() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let socket = phone.socket()
        let id = try phone.createConversation()
        let clientID = UUID().uuidString
        let sent = try phone.post("the quick brown fox", in: id, clientID: clientID)
        let answerID = try #require(sent["assistantMessageId"]?.stringValue)
        #expect(sent["clientId"] == .string(clientID) && sent["status"] == .string("complete") && sent["id"]?.stringValue != answerID)
        #expect(socket.readJSON().isEmpty, "the app inserts the answer's row only after the reply: its events wait")
        bed.bed.advance(millis: Int64(bed.downstream.settings.answerHoldMillis) - 1)
        #expect(socket.readJSON().isEmpty)
        bed.bed.advance(millis: 1)
        let frames = socket.readJSON()
        let complete = try #require(frames.of("message.complete", answerID).first)
        #expect(frames.streamed(answerID) == "echo: the quick brown fox" && complete["content"] == .string("echo: the quick brown fox"))
        let placeholder = try #require(complete["seq"]?.intValue)
        #expect(frames.of("message.delta", answerID).allSatisfy { $0["conversationId"] == .string(id) && $0["seq"]?.intValue == placeholder })
        #expect(frames.of("conversation.updated").isEmpty)
        bed.afterAnnouncement()
        #expect(
            socket.readJSON() == [.object(["type": .string("conversation.updated"), "conversationId": .string(id)])],
            "an answer that ended while held is announced again, in case the app had no row yet"
        )
        let rows = try phone.messages(in: id)
        #expect(rows.map { $0["role"] } == [.string("user"), .string("assistant")])
        #expect(rows[0]["clientId"] == .string(clientID) && rows[0]["seq"] == sent["seq"] && rows[0]["content"] == .string("the quick brown fox"))
        #expect(rows[1]["id"] == .string(answerID) && rows[1]["status"] == .string("complete") && (rows[1]["seq"]?.intValue ?? 0) > placeholder)
        #expect(rows[1]["completedAt"]?.intValue != nil)
        let synced = try phone.sync(since: placeholder)
        #expect(synced["messages"]?.arrayValue?.map { $0["id"] } == [.string(answerID)], "the sync the announcement starts finds the answer")
        #expect(synced["cursor"] == rows[1]["seq"])
    }

    @Test(arguments: [JSONValue.string(""), .string("   \n\t "), .int(3), nil])
    func emptyContentIs400ContentIsRequired(content: JSONValue?) throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let id = try phone.createConversation()
        let body = JSONValue.object(["clientId": .string(UUID().uuidString), "content": content].compactMapValues { $0 })
        let refused = try phone.json("POST", "/conversations/\(id)/messages", body, status: 400)
        #expect(refused == .object(["statusCode": .int(400), "error": .string("Bad Request"), "message": .string("content is required")]))
        #expect(try phone.messages(in: id).isEmpty)
    }

    @Test func aRetriedPostIsTheSameMessageAndNoSecondTurn() throws {
        let (bed, backend) = driven()
        let phone = try bed.register()
        let id = try phone.createConversation()
        let first = try phone.post("only once", in: id, clientID: "C1")
        #expect(try phone.post("only once", in: id, clientID: "C1") == first)
        let conflict = try phone.json(
            "POST",
            "/conversations/\(id)/messages",
            .object(["content": .string("other"), "clientId": .string("C1")]),
            status: 409
        )
        #expect(conflict["message"] == .string("clientId was already used for a different message"))
        #expect(backend.runs.count == 1)
        let plain = try phone.post(" no client id ", in: id, clientID: nil)
        #expect(plain.objectValue?["clientId"] == .null, "written as null")
        let row = try #require(phone.messages(in: id).first { $0["id"] == plain["id"] })
        #expect(row["clientId"] == nil && row["content"] == .string("no client id"), "the relay's own id is not shown; the text is trimmed")
    }

    @Test func aClientIDIsAStringOfAtMost128Bytes() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let id = try phone.createConversation()
        for (clientID, message) in [(JSONValue.int(7), "clientId must be a string"), (.string(""), "clientId must be 1 to 128 bytes")] {
            let body = JSONValue.object(["content": .string("hi"), "clientId": clientID])
            #expect(try phone.json("POST", "/conversations/\(id)/messages", body, status: 400)["message"] == .string(message))
        }
    }

    @Test func loadEarlierPagesBackwardsInAscendingOrder() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let id = try phone.createConversation()
        for index in 0..<6 { _ = try phone.post("message \(index)", in: id) }
        let seqs = try phone.messages(in: id, query: "limit=200").compactMap { $0["seq"]?.intValue }
        #expect(seqs.count == 12 && seqs == seqs.sorted())
        #expect(try phone.messages(in: id, query: "limit=0").compactMap { $0["seq"]?.intValue } == [seqs[11]], "limit clamps to 1")
        for query in ["limit=abc", "before=xyz", "limit=1.5", "limit=-1"] {
            #expect(try phone.json("GET", "/conversations/\(id)/messages", query: query, status: 400)["statusCode"] == .int(400), "\(query)")
        }
        var pages: [[Int64]] = []
        var before: Int64?
        while true {
            let page = try phone.json("GET", "/conversations/\(id)/messages", query: "limit=5" + (before.map { "&before=\($0)" } ?? ""))
            let got = try #require(page["messages"]?.arrayValue).compactMap { $0["seq"]?.intValue }
            pages.insert(got, at: 0)
            guard page["hasMore"] == .bool(true) else { break }
            before = got.first
        }
        #expect(pages == [Array(seqs[0..<2]), Array(seqs[2..<7]), Array(seqs[7..<12])])
    }

    @Test func turnsQueueInOrderUpToMaxQueuedTurns() throws {
        let (bed, backend) = driven { $0.maxQueuedTurns = 1 }
        let phone = try bed.register()
        let socket = phone.socket()
        let id = try phone.createConversation()
        let first = try phone.post("first", in: id)
        let second = try phone.post("second", in: id)
        let refused = try phone.json("POST", "/conversations/\(id)/messages", .object(["content": .string("third")]), status: 429)
        #expect(refused["message"] == .string("too many messages waiting in this conversation; wait for an answer"))
        #expect(backend.runs.map(\.request.text) == ["first"], "one turn at a time per conversation")
        backend.runs[0].emit(.final("answer 1"))
        bed.bed.settle()
        #expect(backend.runs.map(\.request.text) == ["first", "second"])
        backend.runs[1].emit(.final("answer 2"))
        bed.afterHold()
        let completes = socket.readJSON().of("message.complete")
        #expect(completes.map { $0["messageId"] } == [first["assistantMessageId"], second["assistantMessageId"]])
        #expect(completes.map { $0["content"] } == [.string("answer 1"), .string("answer 2")])
        #expect(
            try phone.messages(in: id).compactMap { $0["content"]?.stringValue } == ["first", "second", "answer 1", "answer 2"],
            "a refused message is not stored"
        )
    }

    @Test func aStreamingAnswerSyncsWithItsTextSoFarAndCompletesWithAHigherSeq() throws {
        let (bed, backend) = driven()
        let phone = try bed.register()
        let socket = phone.socket()
        let id = try phone.createConversation()
        let answerID = try #require(phone.post("tell me", in: id)["assistantMessageId"])
        bed.afterHold()
        backend.runs[0].emit(.progress("Once upon"))
        bed.bed.settle()
        #expect(socket.readJSON().streamed(answerID.stringValue ?? "") == "Once upon")
        let mid = try phone.sync()
        let row = try #require(mid["messages"]?.arrayValue?.first { $0["id"] == answerID })
        #expect(
            row["status"] == .string("streaming") && row["content"] == .string("Once upon") && row["completedAt"] == nil
                && row["role"] == .string("assistant")
        )
        backend.runs[0].emit(.final("Once upon a time"))
        bed.bed.settle()
        let completes = socket.readJSON().of("message.complete", answerID.stringValue)
        let complete = try #require(completes.first)
        let after = try phone.sync(since: mid["cursor"]?.intValue ?? 0)
        let final = try #require(after["messages"]?.arrayValue?.first { $0["id"] == answerID })
        #expect(final["status"] == .string("complete") && final["content"] == .string("Once upon a time") && final["seq"] == complete["seq"])
        #expect((final["seq"]?.intValue ?? 0) > (row["seq"]?.intValue ?? .max), "the completion gets a fresh seq: a sync from mid-stream finds it")
    }

    @Test func aSocketOpenedMidStreamFirstGetsTheContentSoFar() throws {
        let (bed, backend) = driven()
        let phone = try bed.register()
        let id = try phone.createConversation()
        let answerID = try #require(phone.post("tell me", in: id)["assistantMessageId"]?.stringValue)
        backend.runs[0].emit(.progress("Once"))
        backend.runs[0].emit(.progress("Once upon"))
        bed.bed.settle()
        let late = phone.socket()
        let opening = late.readJSON()
        #expect(
            opening == [
                .object([
                    "type": .string("message.delta"), "messageId": .string(answerID), "conversationId": .string(id), "delta": .string("Once upon"),
                    "seq": opening.first?["seq"] ?? .null,
                ])
            ]
        )
        backend.runs[0].emit(.progress("Once upon a"))
        backend.runs[0].emit(.final("Once upon a time"))
        bed.bed.settle()
        let rest = late.readJSON()
        #expect("Once upon" + rest.streamed(answerID) == "Once upon a time" && rest.of("message.complete", answerID).count == 1)
    }

    @Test func aMessageFromAnotherDeviceIsAnnouncedThenStreams() throws {
        let (bed, backend) = driven()
        let phone = try bed.register()
        let mac = try phone.addDevice()
        let id = try phone.createConversation()
        let (phoneSocket, macSocket) = (phone.socket(), mac.socket())
        let sent = try mac.post("sent from the mac", in: id)
        let answerID = try #require(sent["assistantMessageId"]?.stringValue)
        #expect(phoneSocket.readJSON() == [.object(["type": .string("conversation.updated"), "conversationId": .string(id)])])
        let synced = try phone.sync()
        let ids = synced["messages"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        #expect(ids == [sent["id"]?.stringValue, answerID].compactMap { $0 }, "the sync it triggers has the message and the answer's row")
        backend.runs[0].emit(.progress("echo"))
        backend.runs[0].emit(.final("echo: sent from the mac"))
        bed.bed.settle()
        let frames = phoneSocket.readJSON()
        #expect(frames.streamed(answerID) == "echo: sent from the mac" && frames.of("message.complete", answerID).count == 1)
        #expect(macSocket.readJSON().of("conversation.updated").isEmpty, "not to the sending device")
    }

    @Test func aMessageFromAnotherProtocolIsAnnouncedToEverySocket() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let id = try phone.createConversation()
        let socket = phone.socket()
        let message = UserMessage(conversationID: id, userID: phone.userID, deviceID: "a-clawline-phone", clientID: "c_1", content: "from elsewhere")
        bed.bed.hub.turns.submit(message, policy: TurnPolicy()) { _ in }
        bed.bed.settle()
        let frames = socket.readJSON()
        #expect(frames.first == .object(["type": .string("conversation.updated"), "conversationId": .string(id)]))
        #expect(frames.of("message.complete").first?["content"] == .string("echo: from elsewhere"))
    }

    @Test func aFailingBackendGivesMessageErrorAndAnErrorRow() throws {
        let (bed, backend) = driven()
        let phone = try bed.register()
        let socket = phone.socket()
        let id = try phone.createConversation()
        let sent = try phone.post("please fail", in: id)
        bed.afterHold()
        backend.runs[0].emit(.failed("exit status 1"))
        bed.bed.settle()
        let errors = socket.readJSON().of("message.error", sent["assistantMessageId"]?.stringValue)
        let error = try #require(errors.first)
        #expect(error["conversationId"] == .string(id) && error["error"]?.stringValue?.isEmpty == false)
        let rows = try #require(phone.sync()["messages"]?.arrayValue)
        let row = try #require(rows.first { $0["id"] == sent["assistantMessageId"] })
        #expect(row["status"] == .string("error") && row["error"]?.stringValue?.isEmpty == false)
        #expect(rows.first { $0["id"] == sent["id"] }?["status"] == .string("complete"))
    }

    @Test func aSilentBackendIsCutAfterTurnInactivitySeconds() throws {
        let (bed, backend) = driven { $0.turnInactivitySeconds = 1 }
        let phone = try bed.register()
        let socket = phone.socket()
        let id = try phone.createConversation()
        let answerID = try #require(phone.post("are you there", in: id)["assistantMessageId"]?.stringValue)
        bed.bed.advance(millis: 999)
        #expect(socket.readJSON().of("message.error").isEmpty)
        bed.bed.advance(millis: 1)
        #expect(socket.readJSON().of("message.error", answerID).first?["error"]?.stringValue?.isEmpty == false)
        #expect(backend.runs[0].isCancelled)
        let row = try phone.sync()["messages"]?.arrayValue?.first { $0["id"]?.stringValue == answerID }
        #expect(row?["status"] == .string("error") && row?["error"]?.stringValue?.isEmpty == false)
    }

    @Test func theSocketIsReceiveOnlyAndIgnoresWhatItIsSent() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let socket = phone.socket()
        for text in ["hello", #"{"type":"message.send","content":"x"}"#, "{not json"] { socket.send(text) }
        socket.send(binary: [0, 1, 2])
        #expect(socket.readJSON().isEmpty && !socket.isClosed)
        let id = try phone.createConversation()
        let answerID = try #require(phone.post("still here", in: id)["assistantMessageId"]?.stringValue)
        bed.afterHold()
        let frames = socket.readJSON()
        #expect(frames.of("message.complete", answerID).first?["content"] == .string("echo: still here"))
        #expect(frames.allSatisfy { ["message.delta", "message.complete", "conversation.updated"].contains($0.type) })
    }

    @Test func toolsOfARunningAnswerStartAndEnd() throws {
        let (bed, backend) = driven()
        let phone = try bed.register()
        let socket = phone.socket()
        let id = try phone.createConversation()
        let answerID = try #require(phone.post("list files", in: id)["assistantMessageId"]?.stringValue)
        bed.afterHold()
        backend.runs[0].emit(.toolStarted(ToolActivity(id: "t1", name: "Bash", label: "ls -l")))
        backend.runs[0].emit(.toolEnded(ToolActivity(id: "t1", name: "Bash", success: true)))
        bed.bed.settle()
        #expect(
            socket.readJSON() == [
                .object(["type": .string("tool.start"), "messageId": .string(answerID), "tool": .string("Bash"), "label": .string("ls -l")]),
                .object(["type": .string("tool.end"), "messageId": .string(answerID), "tool": .string("Bash")]),
            ]
        )
    }

    @Test func aSyncOrAPageWithABadArgumentIs400() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        #expect(try phone.json("GET", "/sync", query: "since=-3", status: 400)["message"] == .string("since must be a non-negative integer"))
        #expect(try phone.json("GET", "/sync", query: "since=")["cursor"] == .int(0), "empty is absent")
    }
}
