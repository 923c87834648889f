import GatewayWire
import RelayCore
import RelayTesting
import Testing

@testable import GatewayBridge

/// The routing identity native apps need before they flush queued messages: the capability in
/// `hello-ok`, `agents.list`, `agent.identity.get`, and a `chat.send` whose routing contract is
/// not the relay's refused before anything is stored.
@Suite struct GatewayRoutingTests {
    func send(_ client: GatewayTestClient, key: String, run: String, contract: JSONValue?) -> JSONValue? {
        var params: [String: JSONValue] = ["sessionKey": .string(key), "message": .string("queued offline"), "idempotencyKey": .string(run)]
        params["expectedSessionRoutingContract"] = contract
        return client.request("chat.send", .object(params))
    }

    @Test func helloOkAdvertisesTheContractAndAgentsListTheRelayAsOneAgent() throws {
        var settings = GatewaySettings()
        settings.name = "home relay"
        let bed = GatewayTestbed(settings: settings)
        let (client, answer) = try bed.paired(TestDevice(), .openClawKitIOS)
        let hello = try #require(answer["payload"].flatMap { GatewayJSON.decode(HelloOk.self, from: $0) })
        #expect(hello.features?.capabilities == ["chat-send-routing-contract"])
        #expect(hello.features?.methods.contains("agents.list") == true && hello.features?.methods.contains("agent.identity.get") == true)
        let agents = try #require(client.request("agents.list")?["payload"])
        #expect(
            agents
                == .object([
                    "defaultId": .string("main"), "mainKey": .string("main"), "scope": .string("per-sender"),
                    "agents": .array([
                        .object(["id": .string("main"), "name": .string("home relay"), "identity": .object(["name": .string("home relay")])])
                    ]),
                ])
        )
        let defaults = answer["payload"]?["snapshot"]?["sessionDefaults"]
        #expect(
            defaults?["defaultAgentId"] == agents["defaultId"] && defaults?["mainKey"] == agents["mainKey"] && defaults?["scope"] == agents["scope"]
        )
        let identity = client.request("agent.identity.get", .object(["sessionKey": .string("agent:main:main")]))?["payload"]
        #expect(identity == .object(["agentId": .string("main"), "name": .string("home relay")]))
        #expect(client.request("agent.identity.get")?["payload"] == identity)
        for params: JSONValue in [
            .object(["agentId": .string("ops")]), .object(["sessionKey": .string("agent:ops:main")]), .object(["sessionKey": .int(1)]),
        ] {
            #expect(client.request("agent.identity.get", params)?["error"]?["code"] == .string("INVALID_REQUEST"), "\(params)")
        }
    }

    @Test func aSendWithAnotherContractIsRefusedBeforeAnythingIsStored() throws {
        let bed = GatewayTestbed()
        let (client, _) = try bed.paired(TestDevice(), .openClawKitIOS)
        let refused = try #require(send(client, key: "outbox", run: "q1", contract: .string("global|main|main")))
        #expect(refused["error"]?["code"] == .string("INVALID_REQUEST"))
        #expect(refused["error"]?["message"] == .string("session routing changed; review and retry"))
        #expect(refused["error"]?["details"]?["reason"] == .string("session-routing-changed"))
        #expect(client.request("sessions.list")?["payload"]?["sessions"]?.arrayValue?.isEmpty == true, "nothing was stored")
        #expect(send(client, key: "outbox", run: "q2", contract: .int(3))?["error"]?["code"] == .string("INVALID_REQUEST"))
        let accepted = send(client, key: "outbox", run: "q3", contract: .string(" Per-Sender|MAIN|main "))
        #expect(accepted?["payload"]?["status"] == .string("started"), "trimmed and compared without case, as OpenClaw does")
        #expect(send(client, key: "outbox", run: "q4", contract: .null)?["payload"]?["status"] == .string("started"), "a live send may leave it out")
    }

    @Test func theAgentQualifiedMainKeyIsTheMainSession() throws {
        let bed = GatewayTestbed()
        let (client, _) = try bed.paired(TestDevice(), .openClawKitIOS)
        _ = send(client, key: "main", run: "m1", contract: nil)
        _ = send(client, key: "agent:main:main", run: "m2", contract: .string("per-sender|main|main"))
        let keys = client.request("sessions.list")?["payload"]?["sessions"]?.arrayValue?.map(\.["key"])
        #expect(keys == [.string("main")], "agent:main:main names the main session")
        let texts = client.request("chat.history", .object(["sessionKey": .string("agent:main:main")]))?["payload"]?["messages"]?.arrayValue
        #expect(texts?.filter { $0["role"] == .string("user") }.count == 2)
    }
}
