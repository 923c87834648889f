import GatewayWire
import RelayCore
import RelayTesting
import Testing

@testable import GatewayBridge

/// OpenClaw's `agent` events: a run's lifecycle and assistant text to every reader, its tool uses
/// only to sockets that asked (`caps: ["tool-events"]`), each socket counting the run's frames
/// 1, 2, 3, … without a gap, and the lifecycle's end before the `chat` final.
@Suite struct GatewayAgentEventsTests {
    static func send(_ client: GatewayTestClient, _ text: String, run: String) {
        _ = client.request("chat.send", .object(["sessionKey": .string("main"), "message": .string(text), "idempotencyKey": .string(run)]))
    }

    /// The `agent` payloads a client read, as (stream, seq, data).
    static func frames(_ client: GatewayTestClient) -> [(stream: String, seq: Int64, data: JSONValue)] {
        client.events("agent").compactMap { frame in
            guard let payload = frame["payload"], let stream = payload["stream"]?.stringValue, let seq = payload["seq"]?.intValue else { return nil }
            return (stream, seq, payload["data"] ?? .null)
        }
    }

    @Test func aRunIsItsLifecycleAndTextAndItsEndComesBeforeTheChatFinal() throws {
        let bed = GatewayTestbed()
        let (writer, _) = try bed.paired(TestDevice())
        let before = bed.bed.clock.nowMillis()
        Self.send(writer, "hi", run: "run-1")
        writer.pump()
        let order = writer.seen.compactMap { frame -> String? in
            guard frame["type"] == .string("event"), let name = frame["event"]?.stringValue, name == "agent" || name == "chat" else { return nil }
            return name == "agent"
                ? "agent:\(frame["payload"]?["stream"]?.stringValue ?? "")" : "chat:\(frame["payload"]?["state"]?.stringValue ?? "")"
        }
        #expect(order == ["agent:lifecycle", "agent:assistant", "chat:delta", "agent:assistant", "agent:lifecycle", "chat:final"])
        let payloads = writer.events("agent").compactMap(\.["payload"])
        #expect(payloads.allSatisfy { $0["runId"] == .string("run-1") && $0["sessionKey"] == .string("main") && $0["ts"]?.intValue != nil })
        #expect(payloads.map(\.["seq"]) == [.int(1), .int(2), .int(3), .int(4)])
        let data = payloads.compactMap(\.["data"])
        try #require(data.count == 4)
        #expect(data[1] == .object(["text": .string("echo"), "delta": .string("echo")]))
        #expect(data[2] == .object(["text": .string("echo: hi"), "delta": .string(": hi")]), "the final text ends the stream")
        #expect(data[3]["phase"] == .string("end") && data[3]["startedAt"]?.intValue ?? 0 >= before && data[3]["endedAt"]?.intValue != nil)
        #expect(data[0] == .object(["phase": .string("start"), "startedAt": data[3]["startedAt"] ?? .null]))
    }

    @Test func toolFramesGoOnlyToSocketsThatAskAndEachCountsWithoutAGap() throws {
        let backend = ScriptedBackend(name: "claude")
        let bed = GatewayTestbed(backends: [backend])
        let (writer, _) = try bed.paired(TestDevice())
        let (tools, _) = try bed.paired(TestDevice(), .scopes(["operator.read"], caps: ["tool-events"]))
        let (pairer, _) = try bed.paired(TestDevice(), .scopes(["operator.pairing"], caps: ["tool-events"]))
        Self.send(writer, "list files", run: "r")
        let run = try #require(backend.runs.first)
        run.emit(.progress("Let me look."))
        run.emit(.toolStarted(ToolActivity(id: "toolu_1", name: "Bash", label: "ls", inputJSON: #"{"command":"ls"}"#)))
        run.emit(.status("API overloaded, retrying 2/10"))
        bed.bed.settle()
        run.emit(.toolEnded(ToolActivity(id: "toolu_1", name: "Bash", label: "ls", success: false, result: "ls: cannot open")))
        run.emit(.progress("Let me look. Nothing there."))
        bed.bed.settle()
        bed.bed.advance(millis: 150)
        run.emit(.final("Nothing there."))
        bed.bed.settle()

        let plain = Self.frames(writer)
        #expect(plain.map(\.stream) == ["lifecycle", "assistant", "assistant", "assistant", "lifecycle"], "no tool frames, no status")
        #expect(plain.map(\.seq) == [1, 2, 3, 4, 5])
        let all = Self.frames(tools)
        #expect(all.map(\.stream) == ["lifecycle", "assistant", "tool", "tool", "assistant", "assistant", "lifecycle"])
        #expect(all.map(\.seq) == [1, 2, 3, 4, 5, 6, 7])
        #expect(
            all[2].data
                == .object([
                    "phase": .string("start"), "name": .string("Bash"), "toolCallId": .string("toolu_1"), "meta": .string("ls"),
                    "args": .object(["command": .string("ls")]),
                ])
        )
        #expect(
            all[3].data
                == .object([
                    "phase": .string("result"), "name": .string("Bash"), "toolCallId": .string("toolu_1"), "meta": .string("ls"),
                    "isError": .bool(true),
                    "result": .object(["content": .array([.object(["type": .string("text"), "text": .string("ls: cannot open")])])]),
                ])
        )
        #expect(
            all[4].data == .object(["text": .string("Let me look. Nothing there."), "delta": .string(" Nothing there.")]),
            "with the held chat delta"
        )
        #expect(all[5].data == .object(["text": .string("Nothing there."), "delta": .string("Nothing there.")]), "a rewritten answer is sent whole")
        #expect(pairer.events("agent").isEmpty, "agent events need operator.read")
        #expect(writer.chat("delta").count == 2 && writer.chat("final").count == 1)
    }

    @Test func anAbortedRunEndsAbortedAndAFailedOneWithAnError() throws {
        let backend = ScriptedBackend(name: "claude")
        let bed = GatewayTestbed(backends: [backend])
        let (writer, _) = try bed.paired(TestDevice())
        Self.send(writer, "slow", run: "a")
        _ = writer.request("chat.abort", .object(["sessionKey": .string("main")]))
        bed.bed.settle()
        let aborted = Self.frames(writer)
        #expect(aborted.map(\.data["phase"]) == [.string("start"), .string("end")])
        #expect(aborted.last?.data["aborted"] == .bool(true) && aborted.last?.data["stopReason"] == .string("aborted"))
        Self.send(writer, "fail", run: "f")
        try #require(backend.runs.last).emit(.failed("boom"))
        bed.bed.settle()
        let failed = Self.frames(writer)
        #expect(failed.map(\.seq) == [1, 2], "every run counts from 1")
        #expect(failed.last?.data["phase"] == .string("error") && failed.last?.data["error"] == .string("the assistant failed to answer: boom"))
        #expect(writer.chat("aborted").count == 1 && writer.chat("error").count == 1)
    }

    @Test func aReaderThatJoinsMidRunCountsOnFromTheRunsNumbers() throws {
        let backend = ScriptedBackend(name: "claude")
        let bed = GatewayTestbed(backends: [backend])
        let (writer, _) = try bed.paired(TestDevice())
        Self.send(writer, "long", run: "r")
        let run = try #require(backend.runs.first)
        run.emit(.progress("one"))
        bed.bed.settle()
        let (late, _) = try bed.paired(TestDevice(), .scopes(["operator.read"]))
        bed.bed.advance(millis: 150)
        run.emit(.progress("one two"))
        run.emit(.final("one two"))
        bed.bed.settle()
        #expect(Self.frames(writer).map(\.seq) == [1, 2, 3, 4])
        #expect(Self.frames(late).map(\.seq) == [3, 4], "the same numbers every reader of its kind sees")
    }

    @Test func aFrameWrittenFromItsEncodedDataIsWhatTheEncoderWrites() {
        let data = AgentAssistantData(text: "a \"quoted\" answer ✈️", delta: "answer ✈️")
        let envelope = AgentEventEnvelope(runId: "r", seq: 7, sessionKey: "main", stream: "assistant", ts: 42)
        let whole = AgentEvent(runId: "r", seq: 7, stream: "assistant", ts: 42, sessionKey: "main", data: GatewayJSON.value(data))
        #expect(envelope.payloadJSON(dataJSON: GatewayJSON.encode(data)) == GatewayJSON.encode(whole))
    }
}
