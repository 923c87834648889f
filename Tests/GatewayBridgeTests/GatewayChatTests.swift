import GatewayWire
import RelayCore
import RelayTesting
import Testing

@testable import GatewayBridge

/// Chat in memory: `chat.send` runs on the core's turns, `chat` events go to operators that
/// read chat, duplicates, aborts and `/stop`, the history, and the session list's checks.
@Suite struct GatewayChatTests {
    func send(_ client: GatewayTestClient, _ text: String, key: String = "main", run: String) -> JSONValue? {
        client.request("chat.send", .object(["sessionKey": .string(key), "message": .string(text), "idempotencyKey": .string(run)]))
    }

    @Test func aMessageStreamsToOperatorsAndLandsInTheHistory() throws {
        let bed = GatewayTestbed()
        let (writer, _) = try bed.paired(TestDevice())
        let (reader, _) = try bed.paired(TestDevice(), .scopes(["operator.read"]))
        let (pairer, _) = try bed.paired(TestDevice(), .scopes(["operator.pairing"]))
        let started = try #require(send(writer, "hello gateway", run: "run-1"))
        #expect(started["payload"] == .object(["runId": .string("run-1"), "status": .string("started")]))
        for client in [writer, reader] {
            let deltas = client.chat("delta")
            #expect(deltas.first?["message"]?["content"]?.arrayValue?.first?["text"] == .string("echo"))
            let final = try #require(client.chat("final").first)
            #expect(final["runId"] == .string("run-1") && final["sessionKey"] == .string("main"))
            #expect(final["message"]?["content"] == .array([.object(["type": .string("text"), "text": .string("echo: hello gateway")])]))
            #expect(final["message"]?["seq"]?.intValue != nil && final["seq"] == .int(2), "a run counts its own chat events")
        }
        #expect(pairer.events("chat").isEmpty, "chat events need operator.read")
        let again = try #require(send(writer, "hello gateway", run: "run-1"))
        #expect(again["payload"]?["status"] == .string("ok"), "a finished run's key answers how it ended")
        let mismatch = send(writer, "something else", run: "run-1")
        #expect(mismatch?["error"]?["message"] == .string("idempotencyKey reused with a different message"))
        let history = try #require(writer.request("chat.history", .object(["sessionKey": .string("main")]))?["payload"])
        let texts = history["messages"]?.arrayValue?.map {
            "\($0["role"]?.stringValue ?? ""): \($0["content"]?.arrayValue?.first?["text"]?.stringValue ?? "")"
        }
        #expect(texts == ["user: hello gateway", "assistant: echo: hello gateway"])
        #expect(history["sessionKey"] == .string("main") && history["sessionId"]?.stringValue?.hasPrefix("cv_") == true)
        let sessions = writer.request("sessions.list")?["payload"]?["sessions"]?.arrayValue
        #expect(sessions?.map(\.["key"]) == [.string("main")])
        #expect(writer.request("chat.send", .object(["message": .string("x")]))?["error"]?["message"] == .string("sessionKey required"))
        #expect(writer.request("chat.send", .object(["sessionKey": .string("main")]))?["error"]?["message"] == .string("message is required"))
    }

    @Test func deltasCarryWhatWasAddedAtMostEvery150Milliseconds() throws {
        let backend = ScriptedBackend(name: "echo")
        let bed = GatewayTestbed(backends: [backend])
        let (writer, _) = try bed.paired(TestDevice(), .openClawCLI)
        _ = send(writer, "count", run: "r")
        let run = try #require(backend.runs.first)
        run.emit(.progress("one"))
        bed.bed.settle()
        run.emit(.progress("one two"))
        bed.bed.settle()
        #expect(writer.chat("delta").map(\.["deltaText"]) == [.string("one")], "the second waits for the throttle")
        bed.bed.advance(millis: 150)
        let held = try #require(writer.chat("delta").first)
        #expect(held["deltaText"] == .string(" two") && held["message"]?["content"]?.arrayValue?.first?["text"] == .string("one two"))
        bed.bed.advance(millis: 150)
        run.emit(.progress("rewritten"))
        bed.bed.settle()
        let rewritten = try #require(writer.chat("delta").first)
        #expect(rewritten["deltaText"] == .string("rewritten") && rewritten["replace"] == .bool(true))
        run.emit(.final("done"))
        bed.bed.settle()
        #expect(writer.chat("final").first?["seq"] == .int(4))
    }

    @Test func aRunCanBeAbortedOrStoppedAndADuplicateIsInFlight() throws {
        let backend = ScriptedBackend(name: "echo")
        let bed = GatewayTestbed(backends: [backend])
        let (writer, _) = try bed.paired(TestDevice())
        #expect(send(writer, "slow answer", key: "s1", run: "abort-me")?["payload"]?["status"] == .string("started"))
        #expect(send(writer, "slow answer", key: "s1", run: "abort-me")?["payload"]?["status"] == .string("in_flight"))
        let aborted = try #require(writer.request("chat.abort", .object(["sessionKey": .string("s1")]))?["payload"])
        #expect(aborted == .object(["ok": .bool(true), "aborted": .bool(true), "runIds": .array([.string("abort-me")])]))
        #expect(writer.chat("aborted").first?["runId"] == .string("abort-me"))
        #expect(backend.runs.first?.isCancelled == true)

        _ = send(writer, "another slow one", key: "s2", run: "stop-me")
        let stop = try #require(send(writer, "/stop", key: "s2", run: "stopper")?["payload"])
        #expect(stop == .object(["runId": .string("stopper"), "status": .string("aborted"), "runIds": .array([.string("stop-me")])]))
        let nothing = writer.request("chat.abort", .object(["sessionKey": .string("s2")]))?["payload"]
        #expect(nothing?["aborted"] == .bool(false))
    }

    @Test func aFailedTurnIsAnErrorChatEvent() throws {
        let backend = ScriptedBackend(name: "echo")
        let bed = GatewayTestbed(backends: [backend])
        let (writer, _) = try bed.paired(TestDevice())
        _ = send(writer, "fail please", run: "f")
        try #require(backend.runs.first).emit(.failed("boom"))
        bed.bed.settle()
        let failed = try #require(writer.chat("error").first)
        #expect(failed["runId"] == .string("f") && failed["errorMessage"] == .string("the assistant failed to answer: boom"))
    }

    @Test func theHistoryIsLimitedAndCountsAsRead() throws {
        let bed = GatewayTestbed()
        let (writer, _) = try bed.paired(TestDevice())
        for index in 0..<3 { _ = send(writer, "m\(index)", run: "r\(index)") }
        let newest = writer.request("chat.history", .object(["sessionKey": .string("main"), "limit": .int(2)]))?["payload"]?["messages"]?.arrayValue
        #expect(newest?.compactMap { $0["content"]?.arrayValue?.first?["text"]?.stringValue } == ["m2", "echo: m2"])
        let entry = writer.request("sessions.list")?["payload"]?["sessions"]?.arrayValue?.first
        #expect(entry?["unreadCount"] == .int(0) && entry?["lastReadSeq"] == entry?["lastSeq"], "fetching the history is reading it")
    }

    @Test func sessionsMarkReadAndPatchCheckTheirParams() throws {
        let bed = GatewayTestbed()
        let (writer, _) = try bed.paired(TestDevice())
        _ = send(writer, "hello", run: "r")
        _ = writer.events("sessions.changed")
        let bad: [JSONValue] = [
            .object([:]), .object(["key": .string("main")]), .object(["key": .string("main"), "seq": .string("5")]),
            .object(["key": .string("main"), "seq": .int(-1)]), .object(["key": .string(""), "seq": .int(1)]),
            .object(["key": .int(7), "seq": .int(1)]), .object(["key": .string("never-used"), "seq": .int(1)]),
        ]
        for params in bad {
            let refused = writer.request("sessions.markRead", params)
            #expect(refused?["ok"] == .bool(false) && refused?["error"]?["code"] == .string("INVALID_REQUEST"), "\(params)")
        }
        #expect(writer.request("sessions.list")?["payload"]?["sessions"]?.arrayValue?.count == 1, "marking an unknown session read creates nothing")
        let entry = try #require(writer.request("sessions.list")?["payload"]?["sessions"]?.arrayValue?.first)
        let marked = writer.request("sessions.markRead", .object(["key": .string("main"), "seq": .int(1)]))?["payload"]
        #expect(marked?["lastReadSeq"] == entry["lastReadSeq"], "a cursor never moves back")

        let refusals: [(JSONValue, String)] = [
            (.object(["key": .string("main"), "label": .string(String(repeating: "x", count: 513))]), "label is longer than 512 bytes"),
            (.object(["key": .string("main"), "label": .int(7)]), "label must be a string or null"),
            (.object(["key": .string("main"), "traceLevel": .string("on")]), "unsupported property 'traceLevel'"),
            (.object(["label": .string("x")]), "key required"),
            (.object(["key": .string("cv:cv_no_such_conversation"), "label": .string("x")]), "unknown session"),
        ]
        for (params, message) in refusals {
            #expect(writer.request("sessions.patch", params)?["error"]?["message"] == .string(message), "\(params)")
        }
        let renamed = try #require(writer.request("sessions.patch", .object(["key": .string("main"), "label": .string("Trip ✈️")]))?["payload"])
        #expect(renamed["ok"] == .bool(true) && renamed["key"] == .string("main") && renamed["entry"]?["displayName"] == .string("Trip ✈️"))
        let patched = try #require(writer.events("sessions.changed").last?["payload"])
        #expect(patched["sessionKey"] == .string("main") && patched["reason"] == .string("patch"))
        #expect(patched["session"]?["displayName"] == .string("Trip ✈️") && patched["session"]?["label"] == .string("Trip ✈️"))
        let (reader, _) = try bed.paired(TestDevice(), .scopes(["operator.read"]))
        #expect(
            reader.request("sessions.patch", .object(["key": .string("main"), "label": .string("x")]))?["error"]?["message"]
                == .string("missing scope: operator.write")
        )
        let (pairer, _) = try bed.paired(TestDevice(), .scopes(["operator.pairing"]))
        for method in ["sessions.list", "sessions.markRead", "backends.list"] {
            #expect(
                pairer.request(method, .object(["key": .string("main"), "seq": .int(1)]))?["error"]?["message"]
                    == .string("missing scope: operator.read")
            )
        }
        for key in ["cv:cv_no_such_conversation"] {
            for method in ["chat.history", "chat.send", "sessions.markRead"] {
                let refused = writer.request(
                    method,
                    .object(["sessionKey": .string(key), "key": .string(key), "message": .string("x"), "seq": .int(1)])
                )
                #expect(
                    refused?["error"]?["message"] == .string("unknown session")
                        && refused?["error"]?["details"]?["code"] == .string("UNKNOWN_SESSION")
                )
            }
        }
    }

    @Test func aBackendKeyForABackendTheRelayLacksMakesNoConversation() throws {
        let bed = GatewayTestbed()
        let (writer, _) = try bed.paired(TestDevice())
        let key = "backend:nosuch:x"
        let calls: [(String, [String: JSONValue])] = [
            ("chat.send", ["sessionKey": .string(key), "message": .string("x"), "idempotencyKey": .string("r0")]),
            ("chat.history", ["sessionKey": .string(key)]), ("sessions.patch", ["key": .string(key), "label": .string("x")]),
            ("sessions.markRead", ["key": .string(key), "seq": .int(1)]),
        ]
        for (method, params) in calls {
            let refused = writer.request(method, .object(params))
            #expect(refused?["error"]?["message"] == .string("no backend named nosuch; configured: echo"), "\(method)")
            #expect(refused?["error"]?["details"]?["code"] == .string("UNKNOWN_BACKEND"), "\(method)")
        }
        #expect(writer.request("sessions.list")?["payload"]?["sessions"] == .array([]), "nothing was created")
        let known = try #require(send(writer, "hi", key: "backend:echo:x", run: "r"))
        #expect(known["payload"]?["status"] == .string("started"))
        // A conversation made before its backend left the configuration is still there to read.
        bed.bed.hub.conversations.resolve(.session("backend:gone:old"), userID: bed.settings.userID, draft: ConversationDraft(backend: "gone")) { _ in
        }
        bed.bed.settle()
        #expect(writer.request("chat.history", .object(["sessionKey": .string("backend:gone:old")]))?["ok"] == .bool(true))
    }

    @Test func aChangedConversationIsAnnouncedToEveryReader() throws {
        let bed = GatewayTestbed()
        let (writer, _) = try bed.paired(TestDevice())
        let (watcher, _) = try bed.paired(TestDevice(), .scopes(["operator.read"]))
        _ = send(writer, "first", run: "k")
        // OpenClaw's shape: {sessionKey, reason, ts, session: the row}; the relay's counts are row fields.
        let announced = try #require(watcher.events("sessions.changed").last?["payload"])
        #expect(announced["sessionKey"] == .string("main") && announced["reason"] == .string("send") && announced["ts"]?.intValue != nil)
        let unread = try #require(announced["session"])
        #expect(unread["key"] == .string("main") && unread["unreadCount"] == .int(1) && unread["lastMessagePreview"] == .string("echo: first"))
        #expect(unread["unread"] == .bool(true) && unread["pinned"] == .bool(false) && unread["model"] == .string("echo"))
        let newest = try #require(unread["lastSeq"]?.intValue)
        let marked = writer.request("sessions.markRead", .object(["key": .string("main"), "seq": .int(newest)]))?["payload"]
        #expect(marked == .object(["key": .string("main"), "lastReadSeq": .int(newest), "unreadCount": .int(0)]))
        let read = try #require(watcher.events("sessions.changed").last?["payload"])
        #expect(read["reason"] == .string("read") && read["session"]?["unreadCount"] == .int(0) && read["session"]?["unread"] == .bool(false))
        let past = writer.request("sessions.markRead", .object(["key": .string("main"), "seq": .int(newest + 1000)]))?["payload"]
        #expect(past?["lastReadSeq"] == .int(newest), "a seq past the newest message is clamped")
    }
}
