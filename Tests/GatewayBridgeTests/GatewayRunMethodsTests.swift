import GatewayWire
import RelayCore
import RelayTesting
import Testing

@testable import GatewayBridge

/// The methods OpenClaw's apps call around a run: `agent.wait`, `commands.list`, `chat.inject`,
/// and a woken node's `node.pending.*`, each answered in OpenClaw's shape.
@Suite struct GatewayRunMethodsTests {
    func send(_ client: GatewayTestClient, _ text: String, key: String = "main", run: String) -> JSONValue? {
        client.request("chat.send", .object(["sessionKey": .string(key), "message": .string(text), "idempotencyKey": .string(run)]))
    }

    func wait(_ client: GatewayTestClient, _ run: String, timeout: Int64? = nil) -> String {
        var params: [String: JSONValue] = ["runId": .string(run)]
        if let timeout { params["timeoutMs"] = .int(timeout) }
        let id = client.upcomingID
        client.request("agent.wait", .object(params))
        return id
    }

    @Test func aWokenNodeFindsAnEmptyQueue() throws {
        let bed = GatewayTestbed()
        let node = TestDevice()
        let (nodeClient, hello) = try bed.paired(node, .node())
        let methods = hello["payload"]?["features"]?["methods"]?.arrayValue ?? []
        #expect(["node.pending.pull", "node.pending.drain", "node.pending.ack"].allSatisfy { methods.contains(.string($0)) })
        let nodeID = JSONValue.string(node.deviceID)
        #expect(nodeClient.request("node.pending.pull")?["payload"] == .object(["nodeId": nodeID, "actions": .array([])]))
        let drained = nodeClient.request("node.pending.drain", .object(["maxItems": .int(10)]))?["payload"]
        #expect(drained == .object(["nodeId": nodeID, "revision": .int(0), "items": .array([]), "hasMore": .bool(false)]))
        let acked = nodeClient.request("node.pending.ack", .object(["ids": .array([.string(" a "), .string("a"), .string("b")])]))?["payload"]
        #expect(acked == .object(["nodeId": nodeID, "ackedIds": .array([.string("a"), .string("b")]), "remainingCount": .int(0)]))
        let refused: [(String, JSONValue)] = [
            ("node.pending.drain", .object(["maxItems": .int(11)])), ("node.pending.drain", .object(["maxItems": .string("5")])),
            ("node.pending.ack", .object([:])), ("node.pending.ack", .object(["ids": .array([])])),
            ("node.pending.ack", .object(["ids": .array([.string(" ")])])),
            ("node.pending.ack", .object(["ids": .array(Array(repeating: .string("x"), count: 101))])),
        ]
        for (method, params) in refused {
            #expect(nodeClient.request(method, params)?["error"]?["code"] == .string("INVALID_REQUEST"), "\(method) \(params)")
        }
        let (operatorClient, _) = try bed.paired(TestDevice())
        #expect(operatorClient.request("node.pending.pull")?["error"]?["message"] == .string("only nodes have pending work"))
    }

    @Test func agentWaitTimesOutWhileTheRunRunsAndSaysOkOnceItEnded() throws {
        let backend = ScriptedBackend(name: "echo")
        let bed = GatewayTestbed(backends: [backend])
        let (writer, _) = try bed.paired(TestDevice(), .openClawCLI)
        _ = send(writer, "slow", run: "w1")
        let short = wait(writer, "w1", timeout: 1000)
        #expect(writer.response(short) == nil, "it waits")
        bed.bed.advance(millis: 999)
        #expect(writer.response(short) == nil)
        bed.bed.advance(millis: 1)
        #expect(writer.response(short)?["payload"] == .object(["runId": .string("w1"), "status": .string("timeout")]))
        let long = wait(writer, "w1")
        try #require(backend.runs.first).emit(.final("done"))
        bed.bed.settle()
        let ended = try #require(writer.response(long)?["payload"])
        #expect(ended == .object(["runId": .string("w1"), "status": .string("ok"), "endedAt": .int(bed.bed.clock.nowMillis())]))
        #expect(writer.request("agent.wait", .object(["runId": .string("w1"), "timeoutMs": .int(0)]))?["payload"] == ended, "an ended run at once")
        #expect(bed.bed.hub.turns.watchCount == 0)
    }

    @Test func agentWaitReportsFailuresAndAbortsAsOpenClawDoes() throws {
        let backend = ScriptedBackend(name: "echo")
        let bed = GatewayTestbed(backends: [backend])
        let (writer, _) = try bed.paired(TestDevice())
        _ = send(writer, "fail", key: "a", run: "bad")
        _ = send(writer, "abort", key: "b", run: "stopped")
        try #require(backend.runs.first).emit(.failed("boom"))
        _ = writer.request("chat.abort", .object(["sessionKey": .string("b")]))
        bed.bed.settle()
        let failed = writer.request("agent.wait", .object(["runId": .string("bad")]))?["payload"]
        #expect(failed?["status"] == .string("error") && failed?["error"] == .string("the assistant failed to answer: boom"))
        let aborted = writer.request("agent.wait", .object(["runId": .string("stopped")]))?["payload"]
        #expect(aborted?["status"] == .string("timeout") && aborted?["stopReason"] == .string("aborted") && aborted?["endedAt"] != nil)
        #expect(
            writer.request("agent.wait", .object(["runId": .string("never"), "timeoutMs": .int(0)]))?["payload"]?["status"] == .string("timeout")
        )
        let refusals: [JSONValue] = [
            .object([:]), .object(["runId": .string("")]), .object(["runId": .int(4)]),
            .object(["runId": .string(String(repeating: "r", count: 257))]), .object(["runId": .string("x"), "timeoutMs": .int(-1)]),
            .object(["runId": .string("x"), "timeoutMs": .string("10")]),
        ]
        for params in refusals {
            #expect(writer.request("agent.wait", params)?["error"]?["code"] == .string("INVALID_REQUEST"), "\(params)")
        }
    }

    @Test func waitsAreBoundedPerSocketAndGoWithIt() throws {
        let bed = GatewayTestbed(backends: [ScriptedBackend(name: "echo")])
        let (writer, _) = try bed.paired(TestDevice())
        let ids = (0..<GatewayDownstream.maxWaitsPerSocket).map { wait(writer, "run-\($0)") }
        #expect(ids.allSatisfy { writer.response($0) == nil })
        let refused = writer.request("agent.wait", .object(["runId": .string("one-more")]))
        #expect(refused?["error"]?["code"] == .string("UNAVAILABLE") && refused?["error"]?["retryable"] == .bool(true))
        #expect(bed.bed.hub.turns.watchCount == GatewayDownstream.maxWaitsPerSocket)
        writer.socket.close()
        #expect(bed.bed.hub.turns.watchCount == 0, "a closed socket's waits are given up")
        bed.bed.advance(millis: 60_000)
    }

    @Test func commandsListTheRelaysAndTheSessionBackendsCommands() throws {
        let claude = CommandfulBackend(name: "claude", slashCommands: ["compact", "cost", "backend"])
        let bed = GatewayTestbed(backends: [ScriptedBackend.echo(), claude])
        let (client, _) = try bed.paired(TestDevice(), .openClawCLI)
        let plain = try #require(client.request("commands.list")?["payload"]?["commands"]?.arrayValue)
        #expect(
            plain.compactMap { $0["name"]?.stringValue } == [
                "backend", "approve", "always", "deny", "new", "reset", "clear", "model", "think", "compact", "stop",
            ],
            "echo has no commands"
        )
        let backendEntry = try #require(plain.first)
        #expect(backendEntry["textAliases"] == .array([.string("/backend")]) && backendEntry["source"] == .string("native"))
        #expect(backendEntry["scope"] == .string("text") && backendEntry["acceptsArgs"] == .bool(true) && backendEntry["args"] == nil)
        #expect(plain.allSatisfy { $0["description"]?.stringValue?.isEmpty == false })
        _ = send(client, "hi", key: "backend:claude:work", run: "c1")
        let params = JSONValue.object(["scope": .string("text"), "includeArgs": .bool(true), "sessionKey": .string("backend:claude:work")])
        let listed = try #require(client.request("commands.list", params)?["payload"]?["commands"]?.arrayValue)
        #expect(
            listed.compactMap { $0["name"]?.stringValue } == [
                "backend", "approve", "always", "deny", "new", "reset", "clear", "model", "think", "compact", "stop", "cost",
            ],
            "the relay runs /compact itself"
        )
        #expect(listed.first?["args"]?.arrayValue?.first?["name"] == .string("name"))
        let cost = try #require(listed.first { $0["name"] == .string("cost") })
        #expect(cost["source"] == .string("plugin") && cost["textAliases"] == .array([.string("/cost")]))
        #expect(client.request("commands.list", .object(["scope": .string("native")]))?["payload"]?["commands"] == .array([]))
        #expect(client.request("commands.list", .object(["scope": .string("voice")]))?["error"]?["code"] == .string("INVALID_REQUEST"))
    }

    @Test func anInjectedNoteIsHistoryAndAChatFinal() throws {
        let bed = GatewayTestbed()
        let (admin, _) = try bed.paired(TestDevice(), .openClawCLI)
        let (reader, _) = try bed.paired(TestDevice(), .scopes(["operator.read"]))
        _ = send(admin, "hello", run: "r")
        _ = reader.events("chat")
        let params = JSONValue.object(["sessionKey": .string("main"), "message": .string("build finished"), "label": .string("CI")])
        let answer = try #require(admin.request("chat.inject", params)?["payload"])
        let messageID = try #require(answer["messageId"]?.stringValue)
        #expect(answer["ok"] == .bool(true))
        let final = try #require(reader.chat("final").first)
        #expect(final["runId"] == .string("inject-" + messageID) && final["seq"] == .int(0) && final["sessionKey"] == .string("main"))
        #expect(final["message"]?["role"] == .string("assistant") && final["message"]?["id"] == .string(messageID))
        #expect(final["message"]?["content"]?.arrayValue?.first?["text"] == .string("[CI]\n\nbuild finished"))
        let history = reader.request("chat.history", .object(["sessionKey": .string("main")]))?["payload"]?["messages"]?.arrayValue
        #expect(history?.last?["id"] == .string(messageID) && history?.last?["role"] == .string("assistant"))
        #expect(reader.request("chat.inject", params)?["error"]?["details"]?["missingScope"] == .string("operator.admin"))
        let refusals: [JSONValue] = [
            .object(["message": .string("x")]), .object(["sessionKey": .string("main")]),
            .object(["sessionKey": .string("main"), "message": .string(" ")]),
            .object(["sessionKey": .string("main"), "message": .string("x"), "label": .string(String(repeating: "l", count: 101))]),
            .object(["sessionKey": .string("main"), "message": .string("x"), "label": .int(1)]),
            .object(["sessionKey": .string("never-used"), "message": .string("x")]),
        ]
        for params in refusals {
            #expect(admin.request("chat.inject", params)?["error"]?["code"] == .string("INVALID_REQUEST"), "\(params)")
        }
    }
}

/// A backend that lists slash commands of its own (as Claude Code's `system/init` does).
final class CommandfulBackend: Backend {
    let name: String
    let slashCommands: [String]
    private let inner: ScriptedBackend

    init(name: String, slashCommands: [String]) {
        self.name = name
        self.slashCommands = slashCommands
        inner = ScriptedBackend.echo(name: name)
    }

    func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle { inner.start(turn, events: events) }
}
