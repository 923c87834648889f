import GatewayWire
import RelayCore
import RelayTesting
import Testing

@testable import GatewayBridge

/// Nodes in memory: `node.list`/`describe`, invokes with their results, timeouts and late
/// answers, background nodes, and `node.event`.
@Suite struct GatewayNodeTests {
    func invoke(_ client: GatewayTestClient, _ node: TestDevice, _ command: String, timeoutMs: Int64? = nil, key: String) -> String {
        let id = client.upcomingID
        var params: [String: JSONValue] = ["nodeId": .string(node.deviceID), "command": .string(command), "idempotencyKey": .string(key)]
        if command == "camera.snap" { params["params"] = .object(["facing": .string("front")]) }
        if let timeoutMs { params["timeoutMs"] = .int(timeoutMs) }
        #expect(client.request("node.invoke", .object(params)) == nil, "waits for the node")
        return id
    }

    func result(_ nodeClient: GatewayTestClient, _ node: TestDevice, for request: JSONValue, payloadJSON: String = "{}") -> JSONValue? {
        nodeClient.request(
            "node.invoke.result",
            .object(["id": request["id"] ?? .null, "nodeId": .string(node.deviceID), "ok": .bool(true), "payloadJSON": .string(payloadJSON)])
        )
    }

    @Test func anInvokeReachesTheNodeAndItsResultTheOperatorThenTimeoutsAndLateResults() throws {
        var settings = GatewaySettings()
        settings.invokeTimeoutMillis = 3_000
        let bed = GatewayTestbed(settings: settings)
        let (operatorClient, _) = try bed.paired(TestDevice())
        let node = TestDevice()
        let (nodeClient, _) = try bed.paired(node, .node())
        let nodes = try #require(operatorClient.request("node.list")?["payload"]?["nodes"]?.arrayValue)
        #expect(nodes.map(\.["nodeId"]) == [.string(node.deviceID)] && nodes.first?["commands"] == .array([.string("camera.snap")]))

        let call = invoke(operatorClient, node, "camera.snap", key: "k1")
        let request = try #require(nodeClient.events("node.invoke.request").first)
        #expect(request["seq"] == nil, "a frame sent to one socket takes no number in its sequence")
        let payload = try #require(request["payload"])
        #expect(payload["command"] == .string("camera.snap") && payload["paramsJSON"] == .string(#"{"facing":"front"}"#))
        #expect(payload["timeoutMs"] == .int(3_000) && payload["idempotencyKey"] == .string("k1"))
        let ack = result(nodeClient, node, for: payload, payloadJSON: #"{"base64":"AAAA","format":"jpg"}"#)
        #expect(ack?["payload"] == .object(["ok": .bool(true)]))
        let answer = try #require(operatorClient.response(call))
        #expect(answer["payload"]?["payload"] == .object(["format": .string("jpg"), "base64": .string("AAAA")]))
        #expect(answer["payload"]?["payloadJSON"] == .string(#"{"base64":"AAAA","format":"jpg"}"#))

        let slow = invoke(operatorClient, node, "camera.snap", timeoutMs: 300, key: "k2")
        let late = try #require(nodeClient.events("node.invoke.request").first?["payload"])
        bed.bed.advance(millis: 300)
        let timedOut = try #require(operatorClient.response(slow))
        #expect(timedOut["error"]?["code"] == .string("UNAVAILABLE") && timedOut["error"]?["details"]?["nodeError"]?["code"] == .string("TIMEOUT"))
        #expect(result(nodeClient, node, for: late)?["payload"] == .object(["ok": .bool(true), "ignored": .bool(true)]))

        let failing = invoke(operatorClient, node, "camera.snap", key: "k3")
        let failed = try #require(nodeClient.events("node.invoke.request").first?["payload"])
        _ = nodeClient.request(
            "node.invoke.result",
            .object(["id": failed["id"] ?? .null, "ok": .bool(false), "error": .object(["code": .string("CAMERA_DISABLED")])])
        )
        #expect(operatorClient.response(failing)?["error"]?["details"]?["nodeError"] == .object(["code": .string("CAMERA_DISABLED")]))

        let undeclared = operatorClient.request("node.invoke", .object(["nodeId": .string(node.deviceID), "command": .string("screen.record")]))
        #expect(undeclared?["error"]?["message"] == .string("the node does not declare screen.record"))
        let pending = invoke(operatorClient, node, "camera.snap", key: "k4")
        nodeClient.socket.close()
        #expect(operatorClient.response(pending)?["error"]?["details"]?["code"] == .string("NOT_CONNECTED"), "what the node owed fails when it goes")
        let missing = try #require(
            operatorClient.request("node.invoke", .object(["nodeId": .string(node.deviceID), "command": .string("camera.snap")]))
        )
        #expect(missing["error"]?["code"] == .string("UNAVAILABLE") && missing["error"]?["details"]?["code"] == .string("NOT_CONNECTED"))
        #expect(
            operatorClient.request("node.describe", .object(["nodeId": .string(node.deviceID)]))?["error"]?["message"]
                == .string("node not connected")
        )
    }

    @Test(arguments: [Int64.max, 10_000_000_000_000_000, -5])
    func anAbsurdInvokeTimeoutIsClamped(_ timeout: Int64) throws {
        let bed = GatewayTestbed()
        let (operatorClient, _) = try bed.paired(TestDevice())
        let node = TestDevice()
        let (nodeClient, _) = try bed.paired(node, .node())
        let call = invoke(operatorClient, node, "camera.snap", timeoutMs: timeout, key: "k")
        let request = try #require(nodeClient.events("node.invoke.request").first?["payload"])
        #expect(request["timeoutMs"] == .int(timeout < 0 ? 1 : 600_000))
        if timeout > 0 { _ = result(nodeClient, node, for: request) } else { bed.bed.advance(millis: 1) }
        #expect(operatorClient.response(call) != nil)
    }

    @Test(arguments: [false, true])
    func aBackgroundNodeIsSpareForegroundOnlyCommands(queueUntilForeground: Bool) throws {
        var settings = GatewaySettings()
        settings.queueUntilForeground = queueUntilForeground
        let bed = GatewayTestbed(settings: settings)
        let (operatorClient, _) = try bed.paired(TestDevice())
        let node = TestDevice()
        let (nodeClient, _) = try bed.paired(node, .node(["camera.snap", "location.get"]))
        let ack = nodeClient.request("node.event", .object(["event": .string("app.state"), "payloadJSON": .string(#"{"state":"background"}"#)]))
        #expect(ack?["payload"] == .object(["ok": .bool(true), "event": .string("app.state"), "handled": .bool(true)]))
        #expect(operatorClient.request("node.list")?["payload"]?["nodes"]?.arrayValue?.first?["foreground"] == .bool(false))

        if !queueUntilForeground {
            let refused = operatorClient.request("node.invoke", .object(["nodeId": .string(node.deviceID), "command": .string("camera.snap")]))
            #expect(refused?["error"]?["details"]?["nodeError"]?["code"] == .string("NODE_BACKGROUND_UNAVAILABLE"))
        } else {
            let camera = invoke(operatorClient, node, "camera.snap", key: "bg")
            #expect(nodeClient.events("node.invoke.request").isEmpty && operatorClient.response(camera) == nil, "held while in the background")
            _ = nodeClient.request("node.event", .object(["event": .string("app.state"), "payload": .object(["state": .string("foreground")])]))
            let request = try #require(nodeClient.events("node.invoke.request").first?["payload"])
            _ = result(nodeClient, node, for: request)
            #expect(operatorClient.response(camera)?["ok"] == .bool(true))
        }
        let location = invoke(operatorClient, node, "location.get", key: "loc")
        let request = try #require(nodeClient.events("node.invoke.request").first?["payload"], "commands that need no foreground still go")
        #expect(request["command"] == .string("location.get"))
        _ = result(nodeClient, node, for: request)
        #expect(operatorClient.response(location)?["ok"] == .bool(true))
    }

    @Test func aWokenNodeSaysItIsAliveAndOnlyNodesSendEvents() throws {
        let bed = GatewayTestbed()
        let node = TestDevice()
        var options = ConnectOptions.node()
        options.protocols = 3...4
        let (nodeClient, _) = try bed.paired(node, options)
        bed.bed.advance(millis: 5_000)
        let alive = nodeClient.request(
            "node.event",
            .object(["event": .string("node.presence.alive"), "payloadJSON": .string(#"{"trigger":"silent_push","sentAtMs":1}"#)])
        )
        #expect(
            alive?["payload"]
                == .object(["ok": .bool(true), "event": .string("node.presence.alive"), "handled": .bool(true), "reason": .string("persisted")])
        )
        #expect(bed.bed.journal.devices[node.deviceID]?.lastSeenAt == bed.bed.clock.nowMillis())
        let broken = nodeClient.request("node.event", .object(["event": .string("node.presence.alive"), "payloadJSON": .string("not json")]))
        #expect(broken?["payload"]?["handled"] == .bool(false) && broken?["payload"]?["reason"] == .string("invalid_payload"))
        let (operatorClient, _) = try bed.paired(TestDevice(), .scopes(["operator.read", "operator.write"]))
        #expect(
            operatorClient.request("node.event", .object(["event": .string("node.presence.alive")]))?["error"]?["code"] == .string("INVALID_REQUEST")
        )
        let push = nodeClient.request("node.event", .object(["event": .string("push.apns.register"), "payload": .object(["token": .string("zz")])]))
        #expect(push?["payload"]?["reason"] == .string("invalid_payload"))
    }

    @Test func aNewerSocketOfTheSameNodeReplacesTheOlderOne() throws {
        let bed = GatewayTestbed()
        let node = TestDevice()
        let (first, _) = try bed.paired(node, .node())
        let (second, _) = try bed.paired(node, .node())
        #expect(first.socket.closeFrame?.code == 1008 && first.socket.closeFrame?.reason == "replaced" && second.closeCode == nil)
        let (operatorClient, _) = try bed.paired(TestDevice())
        #expect(operatorClient.request("node.list")?["payload"]?["nodes"]?.arrayValue?.count == 1)
    }
}
