"""The routing identity OpenClaw's native outbox needs before it flushes messages queued offline
(OpenClawKit's `IOSGatewayChatTransport`: `hello-ok.features.capabilities` holds
`chat-send-routing-contract`, `agents.list` decodes as `AgentsListResult {defaultId, mainKey,
scope, agents:[{id, name?, identity?}]}` and makes the contract `"<scope>|<mainKey>|<defaultId>"`,
lowercased, which `chat.send` carries as `expectedSessionRoutingContract`), and the gateway's
refusal of a send whose contract is not its own (`respondChatSessionRoutingChanged`)."""
from conftest import make_config
from gateway_client import OPENCLAWKIT_IOS, Identity, paired

READ_WRITE = ("operator.read", "operator.write")


def native_contract(agents: dict) -> str:
    """What `OpenClawChatSessionRoutingContract.make` builds from `agents.list`."""
    return "|".join(str(agents[k]).strip().lower() for k in ("scope", "mainKey", "defaultId"))


async def test_the_native_outbox_flushes_with_the_relays_contract_and_a_changed_one_is_refused(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "name": "home relay"}
    relay = relay_factory(cfg)
    client, hello = await paired(relay, Identity(), **OPENCLAWKIT_IOS, scopes=READ_WRITE)
    features = hello["payload"]["features"]
    assert features["capabilities"] == ["chat-send-routing-contract"], features
    assert {"agents.list", "agent.identity.get"} <= set(features["methods"]), features
    listed = await client.request("agents.list", {})
    agents = listed["payload"]
    assert {"defaultId", "mainKey", "scope", "agents"} <= set(agents), agents
    assert agents["scope"] in ("per-sender", "global") and [a["id"] for a in agents["agents"]] == [agents["defaultId"]], agents
    assert agents["agents"][0]["name"] == "home relay" and agents["agents"][0]["identity"] == {"name": "home relay"}, agents
    contract = native_contract(agents)
    assert contract == "per-sender|main|main"
    identity = await client.request("agent.identity.get", {"sessionKey": "agent:main:main"})
    assert identity["payload"] == {"agentId": "main", "name": "home relay"}, identity

    # The outbox qualifies the main session with the agent, as OpenClaw's keys are.
    sent = await client.request("chat.send", {"sessionKey": "agent:main:main", "message": "written offline",
                                              "idempotencyKey": "outbox-1", "expectedSessionRoutingContract": contract})
    assert sent["ok"] and sent["payload"]["status"] == "started", sent
    await client.event("chat", where=lambda p: p.get("runId") == "outbox-1" and p.get("state") == "final")
    history = await client.request("chat.history", {"sessionKey": "main"})
    assert [m["content"][0]["text"] for m in history["payload"]["messages"]] == ["written offline", "echo: written offline"]

    refused = await client.request("chat.send", {"sessionKey": "agent:main:main", "message": "routed elsewhere",
                                                 "idempotencyKey": "outbox-2", "expectedSessionRoutingContract": "global|main|main"})
    assert not refused["ok"], refused
    assert refused["error"]["code"] == "INVALID_REQUEST", refused
    assert refused["error"]["message"] == "session routing changed; review and retry", refused
    assert refused["error"]["details"]["reason"] == "session-routing-changed", refused
    history = await client.request("chat.history", {"sessionKey": "main"})
    assert len(history["payload"]["messages"]) == 2, "the refused message was not stored"
