import GatewayWire
import RelayCore
import RelayTesting
import Testing

@testable import GatewayBridge

/// Opening a session mid-run in memory: `chat.history`'s `sessionInfo` and `inFlightRun`, and
/// `session.message` for subscribed sockets only.
@Suite struct GatewayResumeTests {
    func send(_ client: GatewayTestClient, _ text: String, key: String = "main", run: String) -> JSONValue? {
        client.request("chat.send", .object(["sessionKey": .string(key), "message": .string(text), "idempotencyKey": .string(run)]))
    }

    func history(_ client: GatewayTestClient, _ params: [String: JSONValue] = [:]) -> JSONValue? {
        client.request("chat.history", .object(["sessionKey": .string("main")].merging(params) { $1 }))?["payload"]
    }

    @Test func theHistoryOfARunningSessionShowsItsRunsAndTheAnswerSoFar() throws {
        let backend = ScriptedBackend(name: "echo")
        let bed = GatewayTestbed(backends: [backend])
        let (writer, _) = try bed.paired(TestDevice())
        _ = send(writer, "first", run: "r1")
        _ = send(writer, "second", run: "r2")
        let run = try #require(backend.runs.first)
        run.emit(.progress("half"))
        bed.bed.settle()
        let during = try #require(history(writer))
        #expect(
            during["sessionInfo"]
                == .object(["key": .string("main"), "hasActiveRun": .bool(true), "activeRunIds": .array([.string("r1"), .string("r2")])])
        )
        #expect(during["inFlightRun"] == .object(["runId": .string("r1"), "text": .string("half")]))
        #expect(during["hasMore"] == .bool(false) && during["nextOffset"] == nil)
        run.emit(.final("whole"))
        bed.bed.settle()
        try #require(backend.runs.count == 2)
        backend.runs[1].emit(.final("done"))
        bed.bed.settle()
        let after = try #require(history(writer, ["limit": .int(2)]))
        #expect(after["sessionInfo"]?["activeRunIds"] == .array([]) && after["inFlightRun"] == nil)
        #expect(after["hasMore"] == .bool(true) && after["nextOffset"] == .int(2))
        // Both messages were stored before either answer: the history is in that order.
        #expect(after["messages"]?.arrayValue?.compactMap { $0["content"]?.arrayValue?.first?["text"]?.stringValue } == ["whole", "done"])
        let older = try #require(history(writer, ["limit": .int(2), "offset": .int(2)]))
        #expect(older["messages"]?.arrayValue?.compactMap { $0["content"]?.arrayValue?.first?["text"]?.stringValue } == ["first", "second"])
        #expect(older["hasMore"] == .bool(false))
    }

    @Test func onlySubscribedSocketsGetSessionMessagesAndOnlyForThatSession() throws {
        let bed = GatewayTestbed()
        let (watcher, _) = try bed.paired(TestDevice())
        let (other, _) = try bed.paired(TestDevice())
        let (writer, _) = try bed.paired(TestDevice())
        #expect(
            watcher.request("sessions.messages.subscribe", .object(["key": .string("main")]))?["payload"]
                == .object(["subscribed": .bool(true), "key": .string("main")])
        )
        _ = send(writer, "hello", run: "w1")
        _ = send(writer, "elsewhere", key: "side", run: "w2")
        let got = watcher.events("session.message").compactMap { $0["payload"] }
        #expect(got.map { $0["message"]?["role"]?.stringValue ?? "" } == ["user", "assistant"])
        #expect(got.first?["message"]?["idempotencyKey"] == .string("w1") && got.first?["activeRunIds"] == .array([.string("w1")]))
        #expect(got.last?["hasActiveRun"] == .bool(false))
        #expect(other.events("session.message").isEmpty, "not subscribed")
        #expect(watcher.request("sessions.messages.unsubscribe", .object(["key": .string("main")]))?["payload"]?["subscribed"] == .bool(false))
        _ = send(writer, "again", run: "w3")
        #expect(watcher.events("session.message").isEmpty)
        #expect(
            watcher.request("sessions.messages.unsubscribe", .object(["key": .string("cv:cv_nothing")]))?["payload"]?["subscribed"] == .bool(false)
        )
    }

    @Test func aSubscriptionFollowsItsSessionThroughAReset() throws {
        let bed = GatewayTestbed()
        let (watcher, _) = try bed.paired(TestDevice())
        let (writer, _) = try bed.paired(TestDevice())
        _ = watcher.request("sessions.messages.subscribe", .object(["key": .string("main")]))
        #expect(writer.request("sessions.reset", .object(["key": .string("main")]))?["ok"] == .bool(true))
        _ = watcher.events("session.message")
        _ = send(writer, "after the reset", run: "r1")
        let got = watcher.events("session.message").compactMap { $0["payload"]?["message"]?["content"]?.arrayValue?.first?["text"]?.stringValue }
        #expect(got == ["after the reset", "echo: after the reset"])
    }
}
