import GatewayWire
import RelayCore
import RelayTesting
import Testing

@testable import GatewayBridge

/// What every client sees besides chat and nodes: `hello-ok`, the methods apps call first,
/// ticks, presence and health, per-socket event numbers, malformed frames, the seed's extras.
@Suite struct GatewaySystemTests {
    @Test(arguments: ["openclawkit-ios", "cli"])
    func todaysClientsGetAV4HelloOkWithEveryFieldTheyDecode(_ client: String) throws {
        var settings = GatewaySettings()
        settings.tickIntervalMillis = 400
        let bed = GatewayTestbed(settings: settings)
        var options = client == "cli" ? ConnectOptions.openClawCLI : .openClawKitIOS
        options.scopes = ["operator.read", "operator.write"]
        let (_, answer) = try bed.paired(TestDevice(), options)
        let hello = try #require(answer["payload"].flatMap { GatewayJSON.decode(HelloOk.self, from: $0) }, "\(answer)")
        #expect(hello.protocol == 4 && hello.server?.version.hasPrefix("clawrelay-") == true && hello.server?.connId.isEmpty == false)
        let methods = hello.features?.methods ?? []
        for name in ["health", "status", "models.list", "system-presence", "gateway.identity.get", "last-heartbeat", "chat.send", "sessions.list"] {
            #expect(methods.contains(name), "\(name)")
        }
        #expect(Set(["tick", "presence", "health", "chat"]).isSubset(of: hello.features?.events ?? []))
        let snapshot = try #require(hello.snapshot)
        #expect(snapshot.health.ok && snapshot.presence.count == 1 && snapshot.stateVersion.presence >= 1 && snapshot.authMode == "device")
        #expect(hello.auth?.role == "operator" && hello.auth?.scopes == ["operator.read", "operator.write"])
        #expect(hello.auth?.deviceToken != nil && hello.auth?.issuedAtMs != nil)
        #expect(hello.policy == HelloOk.Policy(maxPayload: 25 << 20, maxBufferedBytes: 50 << 20, tickIntervalMs: 400))
        #expect(GatewayJSON.value(hello) == answer["payload"], "the typed hello-ok is every byte the relay sent")
    }

    @Test func theMethodsAppsCallFirst() throws {
        var settings = GatewaySettings()
        settings.tickIntervalMillis = 400
        settings.backendKinds = ["echo": "echo", "cmd": "command"]
        let bed = GatewayTestbed(settings: settings)
        var options = ConnectOptions.openClawKitIOS
        options.scopes = ["operator.read", "operator.write"]
        let (client, _) = try bed.paired(TestDevice(), options)
        let health = try #require(client.request("health")?["payload"])
        #expect(health["ok"] == .bool(true) && health["ts"] == .int(bed.bed.clock.nowMillis()) && (health["connections"]?.intValue ?? 0) >= 1)
        #expect(client.request("status")?["payload"]?["sessions"]?["recent"]?.arrayValue != nil)
        let models = client.request("models.list", .object(["view": .string("configured"), "sessionKey": .string("main")]))?["payload"]
        #expect(
            models?["models"]?.arrayValue?.map { "\($0["id"]?.stringValue ?? "") \($0["provider"]?.stringValue ?? "")" } == [
                "cmd command", "echo echo",
            ]
        )
        #expect(client.request("models.list", .object(["view": .string("everything")]))?["error"]?["code"] == .string("INVALID_REQUEST"))
        #expect(client.request("system-presence")?["payload"]?.arrayValue?.first?["ts"]?.intValue != nil)
        let identity = try #require(client.request("gateway.identity.get")?["payload"])
        #expect(identity["deviceId"]?.stringValue?.count == 64 && identity["publicKey"] != nil)
        #expect(client.request("last-heartbeat")?["payload"] == .null)
        bed.bed.advance(millis: 800)
        let healthEvent = try #require(client.events("health").first)
        #expect(healthEvent["payload"]?["ok"] == .bool(true) && healthEvent["stateVersion"]?["health"] == .int(2))
        #expect(client.request("no.such.method")?["error"]?["message"] == .string("unknown method no.such.method"))
    }

    @Test func ticksArriveOnTheConfiguredInterval() throws {
        var settings = GatewaySettings()
        settings.tickIntervalMillis = 300
        let bed = GatewayTestbed(settings: settings)
        let (client, _) = try bed.paired(TestDevice())
        bed.bed.advance(millis: 600)
        let ticks = client.events("tick").compactMap { $0["payload"]?["ts"]?.intValue }
        #expect(ticks.count == 2 && ticks[1] - ticks[0] == 300)
    }

    @Test func everySocketNumbersItsOwnEventsWithoutGaps() throws {
        var settings = GatewaySettings()
        settings.tickIntervalMillis = 60_000
        let bed = GatewayTestbed(settings: settings)
        let (writer, _) = try bed.paired(TestDevice(), .openClawCLI)
        let node = TestDevice()
        var nodeOptions = ConnectOptions.node()
        nodeOptions.protocols = 4...4
        let (nodeClient, _) = try bed.paired(node, nodeOptions)
        var readOnly = ConnectOptions.openClawKitIOS
        readOnly.scopes = ["operator.read"]
        let (reader, _) = try bed.paired(TestDevice(), readOnly)
        #expect(
            writer.events("presence").contains {
                $0["payload"]?["presence"]?.arrayValue?.contains { $0["deviceId"] == .string(node.deviceID) } == true
            }
        )
        let invoke = writer.upcomingID
        _ = writer.request(
            "node.invoke",
            .object(["nodeId": .string(node.deviceID), "command": .string("camera.snap"), "idempotencyKey": .string("snap-1")])
        )
        let request = try #require(nodeClient.events("node.invoke.request").first)
        #expect(request["seq"] == nil)
        _ = nodeClient.request(
            "node.invoke.result",
            .object(["id": request["payload"]?["id"] ?? .null, "ok": .bool(true), "payloadJSON": .string("{}")])
        )
        #expect(writer.response(invoke)?["ok"] == .bool(true))
        for run in ["run-a", "run-b"] {
            #expect(
                writer.request(
                    "chat.send",
                    .object(["sessionKey": .string(run), "message": .string("hello \(run)"), "idempotencyKey": .string(run)])
                )?["ok"] == .bool(true)
            )
        }
        bed.bed.advance(millis: 120_000)
        for client in [writer, reader, nodeClient] {
            client.pump()
            let numbered = client.seen.compactMap { $0["type"] == .string("event") ? $0["seq"]?.intValue : nil }
            #expect(!numbered.isEmpty && numbered == Array(1...Int64(numbered.count)), "each socket counts 1, 2, 3, … without gaps: \(numbered)")
        }
        #expect(!nodeClient.seen.contains { $0["event"] == .string("chat") }, "chat events need operator.read")
        var byRun: [String: String] = [:]
        for delta in reader.seen.compactMap(\.["payload"]) where delta["state"] == .string("delta") {
            let run = delta["runId"]?.stringValue ?? ""
            let text = delta["deltaText"]?.stringValue ?? ""
            byRun[run] = delta["replace"] == .bool(true) ? text : (byRun[run] ?? "") + text
            #expect(byRun[run] == delta["message"]?["content"]?.arrayValue?.first?["text"]?.stringValue, "deltaText adds up to the text so far")
        }
    }

    @Test func presenceTellsTheOthersWhoCameAndWent() throws {
        let bed = GatewayTestbed()
        let (watcher, hello) = try bed.paired(TestDevice())
        let version = try #require(hello["payload"]?["snapshot"]?["stateVersion"]?["presence"]?.intValue)
        let node = TestDevice()
        let (nodeClient, _) = try bed.paired(node, .node())
        let came = try #require(watcher.events("presence").last)
        #expect((came["stateVersion"]?["presence"]?.intValue ?? 0) > version)
        #expect(
            came["payload"]?["presence"]?.arrayValue?.contains { $0["deviceId"] == .string(node.deviceID) && $0["role"] == .string("node") } == true
        )
        #expect(nodeClient.events("presence").isEmpty, "a socket is not told it came")
        let described = watcher.request("node.describe", .object(["nodeId": .string(node.deviceID)]))?["payload"]
        #expect(described?["nodeId"] == .string(node.deviceID) && described?["connected"] == .bool(true) && described?["displayName"] == .null)
        nodeClient.socket.close()
        let went = try #require(watcher.events("presence").last)
        #expect(went["payload"]?["presence"]?.arrayValue?.contains { $0["deviceId"] == .string(node.deviceID) } == false)
    }

    @Test(arguments: ["before connect", "after connect"])
    func aMalformedFrameIsAnsweredAndClosedInEveryState(_ state: String) throws {
        for text in [
            "not json", String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
            #"{"type":"req","id":"1","method":"x","params":{"a":"\ud800"}}"#,
        ] {
            let bed = GatewayTestbed()
            let client = state == "before connect" ? try bed.open() : try bed.paired(TestDevice()).0
            client.socket.send(text)
            #expect(client.events("error").last?["payload"]?["code"] == .string("INVALID_REQUEST"))
            #expect(client.closeCode == 1008)
        }
    }

    @Test(arguments: ["before connect", "after connect"])
    func jsonThatIsNotARequestGetsAnErrorResponse(_ state: String) throws {
        let bed = GatewayTestbed()
        let client = state == "before connect" ? try bed.open() : try bed.paired(TestDevice()).0
        client.send(.object(["type": .string("nope"), "id": .string("x1")]))
        let answer = try #require(client.response("x1"))
        #expect(answer["ok"] == .bool(false) && answer["error"]?["code"] == .string("INVALID_REQUEST"))
        if state == "after connect" {
            #expect(client.request("health")?["ok"] == .bool(true) && client.closeCode == nil)
        } else {
            #expect(client.closeCode == 1008)
        }
    }

    @Test func binaryFramesAreTakenLikeText() throws {
        let bed = GatewayTestbed()
        let client = try bed.open()
        client.socket.send(binary: Array(#"{"type":"req","id":"b1","method":"gateway.discover"}"#.utf8))
        #expect(client.response("b1")?["payload"]?["gatewayFingerprint"] == .string("fp-test"))
    }

    @Test func discoverNeedsNoAuthAndOperatorsPairBots() throws {
        let bed = GatewayTestbed(backends: [ScriptedBackend.echo(), ScriptedBackend.echo(name: "cmd")])
        let stranger = try bed.open()
        let found = try #require(stranger.request("gateway.discover")?["payload"])
        #expect(found["pairingRequired"] == .bool(true) && found["gatewayName"] == .string("clawrelay"))
        #expect(found["bots"]?.arrayValue?.compactMap { $0["botId"]?.stringValue } == ["cmd", "echo"])
        let phone = TestDevice()
        let refused = stranger.request(
            "device.pair",
            .object(["deviceId": .string(phone.deviceID), "requestedBots": .string("*"), "token": .string("wrong")])
        )
        #expect(refused?["error"]?["code"] == .string("NOT_PAIRED") && stranger.closeCode == nil, "a refused device.pair leaves the socket open")
        #expect(
            stranger.request("device.pair", .object(["deviceId": .string(phone.deviceID)]))?["error"]?["message"]
                == .string("requestedBots must name configured bots or be \"*\"")
        )

        let (pairer, _) = try bed.paired(TestDevice(), .scopes(["operator.pairing"]))
        let pairing = try #require(
            pairer.request("device.pair", .object(["deviceId": .string(phone.deviceID), "requestedBots": .array([.string("echo")])]))?["payload"]
        )
        #expect(pairing["gatewayFingerprint"] == .string("fp-test"))
        let botToken = try #require(pairing["pairings"]?.arrayValue?.first?["token"]?.stringValue)
        phone.token = botToken
        let connected = try bed.open().connect(phone, .scopes(["operator.read", "operator.write"]))
        #expect(connected["payload"]?["auth"]?["deviceToken"] == .string(botToken), "a bot token pairs the device on the spot")
        let removed = pairer.request("device.unpair", .object(["deviceId": .string(phone.deviceID), "botIds": .string("*")]))
        #expect(removed?["payload"] == .object(["deviceId": .string(phone.deviceID), "removed": .int(1)]))
    }

    @Test func stoppingSaysShutdownThenCloses1012AndHTTPIsRefused() throws {
        let bed = GatewayTestbed()
        let (client, _) = try bed.paired(TestDevice())
        bed.downstream.serviceWillStop()
        let shutdown = try #require(client.events("shutdown").first?["payload"])
        #expect(shutdown == .object(["reason": .string("relay stopping"), "restartExpectedMs": .null]))
        #expect(client.socket.closeFrame?.code == 1012)
        let http = try #require(bed.harness.request("GET", "/"))
        #expect(http.status == 426)
    }
}
