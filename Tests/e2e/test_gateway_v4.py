"""OpenClaw gateway protocol v4, as today's clients speak it: OpenClawKit (v4 range, binary frames, v2
signature) and the CLI; range negotiation, hello-ok, per-connection seq, the methods apps call
first, device tokens per role, and relay-to-relay in both version pairings."""
import asyncio

import pytest

from conftest import is_assistant_final, make_config, message_frame, setup_admin
from gateway_client import OPENCLAW_CLI, OPENCLAWKIT_IOS, GatewayClient, Identity, paired
from test_relay_to_relay import free_port, wait_account

READ_WRITE = ("operator.read", "operator.write")


@pytest.fixture
def v4_relay(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "tick_interval_ms": 400}
    return relay_factory(cfg)


def port(relay):
    return relay.listeners["gateway"][1]


@pytest.mark.parametrize("client", [OPENCLAWKIT_IOS, OPENCLAW_CLI], ids=["openclawkit-ios", "cli"])
async def test_todays_clients_get_a_v4_hello_ok_with_every_field_they_decode(v4_relay, client):
    _, res = await paired(v4_relay, Identity(), scopes=READ_WRITE, **client)
    hello = res["payload"]
    assert hello["type"] == "hello-ok" and hello["protocol"] == 4, hello
    assert isinstance(hello["server"]["version"], str) and hello["server"]["version"] and hello["server"]["connId"], hello
    methods, events = hello["features"]["methods"], hello["features"]["events"]
    for name in ("health", "status", "models.list", "system-presence", "gateway.identity.get", "last-heartbeat", "chat.send", "sessions.list"):
        assert name in methods, name
    assert {"tick", "presence", "health", "chat"} <= set(events), events
    snapshot = hello["snapshot"]
    assert isinstance(snapshot["presence"], list) and all(isinstance(p["ts"], int) for p in snapshot["presence"]), snapshot
    assert snapshot["health"]["ok"] is True and isinstance(snapshot["uptimeMs"], int), snapshot
    assert all(isinstance(snapshot["stateVersion"][k], int) for k in ("presence", "health")), snapshot
    assert hello["auth"]["role"] == "operator" and hello["auth"]["scopes"] == list(READ_WRITE), hello["auth"]
    assert isinstance(hello["auth"]["deviceToken"], str) and isinstance(hello["auth"]["issuedAtMs"], int), hello["auth"]
    policy = hello["policy"]
    assert policy["tickIntervalMs"] == 400 and policy["maxPayload"] > 0 and policy["maxBufferedBytes"] > 0, policy


@pytest.mark.parametrize("offered,agreed", [((3, 4), 4), ((3, 3), 3), ((4, 9), 4), ((2, 3), 3)])
async def test_the_highest_common_version_is_agreed(v4_relay, offered, agreed):
    _, res = await paired(v4_relay, Identity(), protocol=offered)
    assert res["payload"]["protocol"] == agreed, res


async def test_a_range_without_a_common_version_is_a_protocol_mismatch(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "max_protocol": 3}
    pinned = relay_factory(cfg)
    _, res = await paired(pinned, Identity(), protocol=(3, 4))
    assert res["payload"]["protocol"] == 3, "a gateway pinned to 3 agrees on 3 with a 3..4 client"
    client = await GatewayClient.open(port(pinned), binary=True)
    res = await client.connect(Identity(), **OPENCLAWKIT_IOS)
    error = res["error"]
    assert error["code"] == "INVALID_REQUEST" and error["message"] == "protocol mismatch", error
    assert error["details"] == {**error["details"], "code": "PROTOCOL_MISMATCH", "clientMinProtocol": 4, "clientMaxProtocol": 4,
                                "expectedProtocol": 3, "minProtocol": 3, "maxProtocol": 3}, error
    assert await client.expect_close() == 1002


async def test_the_methods_apps_call_first(v4_relay):
    operator, _ = await paired(v4_relay, Identity(), scopes=READ_WRITE, **OPENCLAWKIT_IOS)
    health = await operator.request("health")
    assert health["ok"] and health["payload"]["ok"] is True and isinstance(health["payload"]["ts"], int), health
    status = await operator.request("status")
    assert status["ok"] and isinstance(status["payload"]["sessions"]["recent"], list), status
    models = await operator.request("models.list", {"view": "configured", "sessionKey": "main"})
    assert {(m["id"], m["provider"]) for m in models["payload"]["models"]} == {("echo", "echo"), ("cmd", "command")}, models
    assert all(isinstance(m["name"], str) for m in models["payload"]["models"]), models
    bad_view = await operator.request("models.list", {"view": "everything"})
    assert bad_view["error"]["code"] == "INVALID_REQUEST" and bad_view["error"]["message"], bad_view
    presence = await operator.request("system-presence")
    assert isinstance(presence["payload"], list) and all(isinstance(p["ts"], int) for p in presence["payload"]), presence
    identity = await operator.request("gateway.identity.get")
    device_id, public_key = identity["payload"]["deviceId"], identity["payload"]["publicKey"]
    assert len(device_id) == 64 and public_key, identity
    heartbeat = await operator.request("last-heartbeat")
    assert heartbeat["ok"] and heartbeat["payload"] is None, heartbeat
    health_event = await operator.event("health", timeout=5)
    assert health_event["payload"]["ok"] is True and health_event["stateVersion"]["health"] >= 2, health_event

    await operator.close()
    v4_relay.restart()
    operator, _ = await paired(v4_relay, Identity(), scopes=READ_WRITE)
    again = await operator.request("gateway.identity.get")
    assert again["payload"] == {"deviceId": device_id, "publicKey": public_key}, "the gateway identity is stable across restarts"


async def test_a_woken_node_says_it_is_alive(v4_relay):
    node, _ = await paired(v4_relay, Identity(), role="node", scopes=(), mode="node", protocol=(3, 4), commands=("camera.snap",))
    alive = await node.request("node.event", {"event": "node.presence.alive",
                                              "payloadJSON": '{"trigger":"silent_push","sentAtMs":1,"platform":"iOS 18.4.0"}'})
    assert alive["payload"] == {"ok": True, "event": "node.presence.alive", "handled": True, "reason": "persisted"}, alive
    broken = await node.request("node.event", {"event": "node.presence.alive", "payloadJSON": "not json"})
    assert broken["payload"]["handled"] is False and broken["payload"]["reason"] == "invalid_payload", broken
    operator, _ = await paired(v4_relay, Identity(), scopes=READ_WRITE)
    refused = await operator.request("node.event", {"event": "node.presence.alive"})
    assert refused["error"]["code"] == "INVALID_REQUEST", "only nodes send node.event"


async def test_every_socket_numbers_its_own_events_without_gaps(relay_factory):
    cfg = make_config(echo={"delay_ms": 30})
    cfg["gateway"] = {"listen": "127.0.0.1:0", "tick_interval_ms": 60000}
    relay = relay_factory(cfg)
    writer, _ = await paired(relay, Identity(), scopes=("operator.admin",), **OPENCLAW_CLI)
    node_identity = Identity()
    node, _ = await paired(relay, node_identity, role="node", scopes=(), mode="node", protocol=(4, 4), commands=("camera.snap",))
    await writer.event("presence", where=lambda p: any(e["deviceId"] == node_identity.device_id for e in p["presence"]))
    reader_identity = Identity()
    reader, _ = await paired(relay, reader_identity, scopes=("operator.read",), **OPENCLAWKIT_IOS)
    await node.event("presence", where=lambda p: any(e["deviceId"] == reader_identity.device_id for e in p["presence"]))

    invoke = asyncio.create_task(writer.request("node.invoke", {"nodeId": node_identity.device_id, "command": "camera.snap",
                                                                "idempotencyKey": "snap-1"}))
    request = await node.event("node.invoke.request")
    assert "seq" not in request, "a frame sent to one socket takes no number in its sequence"
    await node.request("node.invoke.result", {"id": request["payload"]["id"], "nodeId": node_identity.device_id, "ok": True, "payloadJSON": "{}"})
    assert (await invoke)["ok"]
    for run in ("run-a", "run-b"):
        started = await writer.request("chat.send", {"sessionKey": run, "message": f"hello {run}", "idempotencyKey": run})
        assert started["ok"], started
        await writer.event("chat", where=lambda p: p.get("state") == "final" and p["runId"] == run, timeout=10)
        await reader.event("chat", where=lambda p: p.get("state") == "final" and p["runId"] == run, timeout=10)
    await node.request("node.event", {"event": "app.state", "payloadJSON": '{"state":"foreground"}'})  # flush the node's events

    for client in (writer, reader, node):
        numbered = [e["seq"] for e in client.seen if e.get("type") == "event" and "seq" in e]
        assert numbered and numbered == list(range(1, len(numbered) + 1)), f"each socket counts 1, 2, 3, … without gaps: {numbered}"
    assert not any(e.get("event") == "chat" for e in node.seen), "chat events need operator.read"
    deltas = [e["payload"] for e in reader.seen if e.get("event") == "chat" and e["payload"]["state"] == "delta"]
    by_run = {}
    for delta in deltas:
        assert isinstance(delta["deltaText"], str), delta
        by_run[delta["runId"]] = by_run.get(delta["runId"], "") + delta["deltaText"] if not delta.get("replace") else delta["deltaText"]
        assert by_run[delta["runId"]] == delta["message"]["content"][0]["text"], "deltaText adds up to the text so far"


async def test_tokens_are_per_device_and_role_and_never_rotated_behind_a_devices_back(v4_relay):
    device = Identity()
    _, hello = await paired(v4_relay, device, scopes=READ_WRITE, **OPENCLAWKIT_IOS)
    operator_token = hello["payload"]["auth"]["deviceToken"]
    tokenless = await GatewayClient.open(port(v4_relay), binary=True)
    res = await tokenless.connect(device, token="", scopes=READ_WRITE, **OPENCLAWKIT_IOS)
    assert res["ok"] and "deviceToken" not in res["payload"]["auth"], res
    again = await GatewayClient.open(port(v4_relay), binary=True)
    assert (await again.connect(device, token=operator_token, scopes=READ_WRITE, **OPENCLAWKIT_IOS))["ok"], "the token still works"

    wrong = await GatewayClient.open(port(v4_relay))
    res = await wrong.connect(device, scopes=READ_WRITE, auth={"deviceToken": "stale"})
    details = res["error"]["details"]
    assert details["code"] == "AUTH_DEVICE_TOKEN_MISMATCH" and details["canRetryWithDeviceToken"] is False, details
    assert res["error"]["message"], "error frames carry a message (OpenClawKit drops them otherwise)"

    # The same device as a node is a new role: it asks, is approved, and gets a token of its own.
    as_node = await GatewayClient.open(port(v4_relay))
    res = await as_node.connect(device, role="node", scopes=(), mode="node", token="", protocol=(4, 4))
    assert res["error"]["details"]["code"] == "PAIRING_REQUIRED" and res["error"]["details"]["reason"] == "role-upgrade", res
    await asyncio.to_thread(v4_relay.cli, "devices", "approve", device.device_id)
    as_node = await GatewayClient.open(port(v4_relay))
    res = await as_node.connect(device, role="node", scopes=(), mode="node", token="", protocol=(4, 4))
    node_token = res["payload"]["auth"]["deviceToken"]
    assert res["ok"] and node_token != operator_token, res
    operator_again = await GatewayClient.open(port(v4_relay))
    assert (await operator_again.connect(device, token=operator_token, scopes=READ_WRITE))["ok"], "the operator token is untouched"
    crossed = await GatewayClient.open(port(v4_relay))
    res = await crossed.connect(device, token=node_token, scopes=READ_WRITE)
    assert res["error"]["details"]["code"] == "AUTH_DEVICE_TOKEN_MISMATCH", "a node token is not an operator token"


def start_pair(relay_factory, b_max_protocol=None):
    b_port = free_port()
    b_cfg = make_config()
    b_cfg["gateway"] = {"listen": f"127.0.0.1:{b_port}", "tick_interval_ms": 500, "auto_approve_loopback": True}
    if b_max_protocol:
        b_cfg["gateway"]["max_protocol"] = b_max_protocol
    relay_b = relay_factory(b_cfg)
    a_cfg = make_config(clawline={"backend": "up"})
    a_cfg["backends"].append({"name": "up", "kind": "openclaw", "url": f"ws://127.0.0.1:{b_port}"})
    return relay_factory(a_cfg), relay_b


@pytest.mark.parametrize("b_max,agreed", [(None, 4), (3, 3)], ids=["b-speaks-4", "b-pinned-to-3"])
async def test_relay_to_relay_logs_in_with_the_highest_common_version(relay_factory, b_max, agreed):
    relay_a, relay_b = start_pair(relay_factory, b_max)
    account = await asyncio.to_thread(wait_account, relay_a, "connected")
    assert f"(protocol {agreed})" in account["detail"], account
    _, client = await setup_admin(relay_a)
    await client.send_json(message_frame(f"over protocol {agreed}"))
    final, _ = await client.recv_until(is_assistant_final(), timeout=10)
    assert final["content"] == f"echo: over protocol {agreed}", final


async def test_an_upstream_whose_device_token_was_rotated_drops_it_and_heals(relay_factory):
    relay_a, relay_b = start_pair(relay_factory)
    await asyncio.to_thread(wait_account, relay_a, "connected")
    a_device = next(d for d in await asyncio.to_thread(relay_b.devices) if d["protocol"] == "gateway")["deviceId"]
    token_file = next((relay_a.data_dir / "accounts").glob("*.token"))
    stale = token_file.read_text()
    operator, _ = await paired(relay_b, Identity())
    rotated = await operator.request("device.token.rotate", {"deviceId": a_device, "role": "operator"})
    assert rotated["ok"] and "token" not in rotated["payload"], rotated
    # B closes A's socket; A comes back with the stale token, is told AUTH_DEVICE_TOKEN_MISMATCH,
    # drops it and connects again on its key.
    await asyncio.to_thread(wait_account, relay_a, "retrying")
    await asyncio.to_thread(wait_account, relay_a, "connected")
    assert not token_file.exists() or token_file.read_text() != stale, "the refused token is gone"
    _, client = await setup_admin(relay_a)
    await client.send_json(message_frame("healed"))
    final, _ = await client.recv_until(is_assistant_final(), timeout=10)
    assert final["content"] == "echo: healed", final
