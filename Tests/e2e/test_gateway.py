"""OpenClaw gateway v3 downstream: handshake, device identity, pairing, nodes and chat, over the wire."""
import asyncio
import json
import time

import pytest

from conftest import make_config
from gateway_client import GatewayClient, Identity, paired


@pytest.fixture
def gateway_relay(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "tick_interval_ms": 300, "invoke_timeout_ms": 3000}
    return relay_factory(cfg)


def port(relay):
    return relay.listeners["gateway"][1]


async def test_challenge_then_unknown_device_is_not_paired(gateway_relay):
    client = await GatewayClient.open(port(gateway_relay))
    nonce = client.challenge["payload"]["nonce"]
    assert len(nonce) >= 16 and isinstance(client.challenge["payload"]["ts"], int)
    identity = Identity()
    res = await client.connect(identity)
    assert res["ok"] is False and res["error"]["code"] == "NOT_PAIRED", res
    details = res["error"]["details"]
    assert details["code"] == "PAIRING_REQUIRED" and details["reason"] == "not-paired" and details["requestId"], details
    assert await client.expect_close() == 1008
    devices = await asyncio.to_thread(gateway_relay.devices)
    pending = [d for d in devices if d["deviceId"] == identity.device_id]
    assert pending and pending[0]["status"] == "pending" and pending[0]["protocol"] == "gateway", devices


async def test_cli_approval_then_hello_ok_with_device_token(gateway_relay):
    identity = Identity()
    client, res = await paired(gateway_relay, identity)
    hello = res["payload"]
    assert hello["type"] == "hello-ok" and hello["protocol"] == 3
    assert "node.invoke" in hello["features"]["methods"] and "chat" in hello["features"]["events"]
    assert hello["policy"]["tickIntervalMs"] == 300 and hello["policy"]["maxPayload"] > 0
    assert hello["auth"]["role"] == "operator" and hello["auth"]["scopes"] == ["operator.admin"]
    token = hello["auth"]["deviceToken"]
    await client.close()
    again = await GatewayClient.open(port(gateway_relay))
    res = await again.connect(identity, token=token)
    assert res["ok"] and res["payload"]["auth"]["deviceToken"] == token, res
    await again.close()
    wrong = await GatewayClient.open(port(gateway_relay))
    res = await wrong.connect(identity, token="not-the-token")
    assert not res["ok"] and res["error"]["details"]["code"] == "AUTH_DEVICE_TOKEN_MISMATCH", res
    assert await wrong.expect_close() == 1008


async def test_operator_approves_a_node_through_the_protocol(gateway_relay):
    operator, _ = await paired(gateway_relay, Identity())
    node_identity = Identity()
    node = await GatewayClient.open(port(gateway_relay))
    res = await node.connect(node_identity, role="node", scopes=(), mode="node")
    request_id = res["error"]["details"]["requestId"]
    requested = await operator.event("device.pair.requested")
    assert requested["payload"]["requestId"] == request_id and requested["payload"]["deviceId"] == node_identity.device_id
    listing = await operator.request("device.pair.list")
    assert any(p["requestId"] == request_id for p in listing["payload"]["pending"]), listing
    approved = await operator.request("device.pair.approve", {"requestId": request_id})
    assert approved["ok"] and approved["payload"]["decision"] == "approved", approved
    resolved = await operator.event("device.pair.resolved")
    assert resolved["payload"]["decision"] == "approved"
    node = await GatewayClient.open(port(gateway_relay))
    res = await node.connect(node_identity, role="node", scopes=(), mode="node")
    assert res["ok"] and res["payload"]["auth"]["role"] == "node", res


@pytest.mark.parametrize("case", ["bad_signature", "wrong_nonce", "stale", "wrong_id"])
async def test_device_auth_failures_close_1008(gateway_relay, case):
    identity = Identity()
    client = await GatewayClient.open(port(gateway_relay))
    kwargs = {}
    expected = {"bad_signature": "DEVICE_AUTH_SIGNATURE_INVALID", "wrong_nonce": "DEVICE_AUTH_NONCE_MISMATCH",
                "stale": "DEVICE_AUTH_SIGNATURE_EXPIRED", "wrong_id": "DEVICE_AUTH_DEVICE_ID_MISMATCH"}[case]
    if case == "bad_signature":
        kwargs["tamper"] = lambda p: p["device"].update(signature=Identity().sign("something else"))
    elif case == "wrong_nonce":
        kwargs["nonce"] = "not-the-challenge"
    elif case == "stale":
        kwargs["signed_at"] = int(time.time() * 1000) - 5 * 60 * 1000
    else:
        kwargs["tamper"] = lambda p: p["device"].update(id="0" * 64)
    res = await client.connect(identity, **kwargs)
    assert not res["ok"] and res["error"]["code"] == "INVALID_REQUEST" and res["error"]["details"]["code"] == expected, res
    assert await client.expect_close() == 1008


async def test_protocol_range_without_3_closes_1002(gateway_relay):
    client = await GatewayClient.open(port(gateway_relay))
    res = await client.connect(Identity(), protocol=(1, 2))
    details = res["error"]["details"]
    assert details["code"] == "PROTOCOL_MISMATCH" and details["expectedProtocol"] == 4, res
    assert (details["minProtocol"], details["maxProtocol"]) == (3, 4) and details["clientMaxProtocol"] == 2, res
    assert await client.expect_close() == 1002


async def test_first_frame_must_be_connect_and_small(gateway_relay):
    client = await GatewayClient.open(port(gateway_relay))
    res = await client.request("node.list")
    assert res["ok"] is False and res["error"]["code"] == "INVALID_REQUEST"
    assert await client.expect_close() == 1008
    big = await GatewayClient.open(port(gateway_relay))
    await big.ws.send(json.dumps({"type": "req", "id": "1", "method": "connect", "params": {"pad": "x" * 70_000}}))
    assert await big.expect_close() == 1009


async def test_missing_device_identity_is_not_paired(gateway_relay):
    client = await GatewayClient.open(port(gateway_relay))
    params = client.connect_params(Identity())
    del params["device"]
    res = await client.request("connect", params)
    assert res["error"]["code"] == "NOT_PAIRED" and "identity" in res["error"]["message"], res
    assert await client.expect_close() == 1008


async def test_node_invoke_round_trip_timeout_late_result_and_not_connected(gateway_relay):
    operator, _ = await paired(gateway_relay, Identity())
    node_identity = Identity()
    node, _ = await paired(gateway_relay, node_identity, role="node", scopes=(), mode="node", commands=("camera.snap",))
    nodes = await operator.request("node.list")
    assert [n["nodeId"] for n in nodes["payload"]["nodes"]] == [node_identity.device_id], nodes
    assert nodes["payload"]["nodes"][0]["commands"] == ["camera.snap"]

    call = asyncio.create_task(operator.request("node.invoke", {
        "nodeId": node_identity.device_id, "command": "camera.snap", "params": {"facing": "front"}, "idempotencyKey": "k1"}))
    request = await node.event("node.invoke.request")
    payload = request["payload"]
    assert payload["command"] == "camera.snap" and json.loads(payload["paramsJSON"]) == {"facing": "front"}
    ack = await node.request("node.invoke.result", {
        "id": payload["id"], "nodeId": node_identity.device_id, "ok": True, "payloadJSON": json.dumps({"format": "jpg", "base64": "AAAA"})})
    assert ack["ok"]
    result = await call
    assert result["ok"] and result["payload"]["payload"] == {"format": "jpg", "base64": "AAAA"}, result

    slow = asyncio.create_task(operator.request("node.invoke", {
        "nodeId": node_identity.device_id, "command": "camera.snap", "timeoutMs": 300, "idempotencyKey": "k2"}, timeout=5))
    late = await node.event("node.invoke.request")
    timed_out = await slow
    assert timed_out["error"]["code"] == "UNAVAILABLE" and timed_out["error"]["details"]["nodeError"]["code"] == "TIMEOUT", timed_out
    ignored = await node.request("node.invoke.result", {"id": late["payload"]["id"], "nodeId": node_identity.device_id, "ok": True})
    assert ignored["payload"] == {"ok": True, "ignored": True}, ignored

    await node.close()
    missing = await operator.request("node.invoke", {"nodeId": node_identity.device_id, "command": "camera.snap", "idempotencyKey": "k3"})
    assert missing["error"]["code"] == "UNAVAILABLE" and missing["error"]["details"]["code"] == "NOT_CONNECTED", missing


async def test_chat_send_streams_and_lands_in_history(gateway_relay):
    operator, _ = await paired(gateway_relay, Identity())
    res = await operator.request("chat.send", {"sessionKey": "main", "message": "hello gateway", "idempotencyKey": "run-1"})
    assert res["ok"] and res["payload"] == {"runId": "run-1", "status": "started"}, res
    final = await operator.event("chat", where=lambda p: p.get("state") == "final")
    assert final["payload"]["message"]["content"][0]["text"] == "echo: hello gateway", final
    deltas = [e for e in operator.events if e.get("event") == "chat" and e["payload"]["state"] == "delta"]
    assert all("echo" in d["payload"]["message"]["content"][0]["text"] for d in deltas)
    again = await operator.request("chat.send", {"sessionKey": "main", "message": "hello gateway", "idempotencyKey": "run-1"})
    assert again["payload"]["status"] in ("ok", "in_flight"), again
    history = await operator.request("chat.history", {"sessionKey": "main"})
    texts = [(m["role"], m["content"][0]["text"]) for m in history["payload"]["messages"]]
    assert texts == [("user", "hello gateway"), ("assistant", "echo: hello gateway")], texts
    sessions = await operator.request("sessions.list")
    assert [s["key"] for s in sessions["payload"]["sessions"]] == ["main"], sessions


async def test_tick_events_arrive_on_the_configured_interval(gateway_relay):
    operator, _ = await paired(gateway_relay, Identity())
    first = await operator.event("tick", timeout=3)
    second = await operator.event("tick", timeout=3)
    assert 150 <= second["payload"]["ts"] - first["payload"]["ts"] <= 1500, (first, second)


async def test_gateway_chat_appears_on_clawline_devices_of_the_mapped_user(relay_factory):
    from conftest import auth, relay_of_one_user
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay, admin = await relay_of_one_user(relay_factory, cfg)
    clawline, _ = await auth(relay, admin)
    operator, _ = await paired(relay, Identity())
    res = await operator.request("chat.send", {"sessionKey": "shared", "message": "from the gateway", "idempotencyKey": "r-shared"})
    assert res["ok"], res
    echo, _ = await clawline.recv_until(lambda f: f.get("type") == "message" and f.get("role") == "user")
    assert echo["content"] == "from the gateway", echo
    final, _ = await clawline.recv_until(lambda f: f.get("role") == "assistant" and f.get("streaming") is False, timeout=10)
    assert final["content"] == "echo: from the gateway", final


async def test_discover_needs_no_auth_and_pair_link_tokens_pair_bots_once(gateway_relay):
    client = await GatewayClient.open(port(gateway_relay))
    found = await client.request("gateway.discover")
    assert found["ok"] and found["payload"]["pairingRequired"] is True, found
    fingerprint = found["payload"]["gatewayFingerprint"]
    assert {b["botId"] for b in found["payload"]["bots"]} == {"echo", "cmd"}, found

    link = (await asyncio.to_thread(gateway_relay.cli, "pair-link", "--no-qr")).stdout.strip()
    assert link.startswith("optaplus://pair?host=127.0.0.1&port=") and f"fp={fingerprint}" in link, link
    token = link.split("token=")[1]
    identity = Identity()
    refused = await client.request("device.pair", {"deviceId": identity.device_id, "requestedBots": "*", "token": "wrong"})
    assert refused["error"]["code"] == "NOT_PAIRED", refused
    pairing = await client.request("device.pair", {"deviceId": identity.device_id, "deviceName": "phone", "platform": "ios",
                                                   "requestedBots": ["echo"], "token": token})
    assert pairing["ok"] and pairing["payload"]["gatewayFingerprint"] == fingerprint, pairing
    bot_token = pairing["payload"]["pairings"][0]["token"]
    reuse = await client.request("device.pair", {"deviceId": identity.device_id, "requestedBots": ["echo"], "token": token})
    assert reuse["error"]["code"] == "NOT_PAIRED", "a pair-link token works once"

    identity.token = bot_token
    res = await client.connect(identity, scopes=("operator.read", "operator.write"))
    assert res["ok"] and res["payload"]["auth"]["deviceToken"] == bot_token, res
    removed = await client.request("device.unpair", {"deviceId": identity.device_id, "botIds": "*"})
    assert removed["payload"]["removed"] == 1, removed


async def test_graceful_stop_sends_shutdown_then_1012(gateway_relay):
    operator, _ = await paired(gateway_relay, Identity())
    gateway_relay.proc.send_signal(__import__("signal").SIGTERM)
    shutdown = await operator.event("shutdown", timeout=5)
    assert shutdown["payload"]["reason"], shutdown
    assert await operator.expect_close() == 1012
    assert await asyncio.to_thread(gateway_relay.proc.wait, 10) == 0


async def test_token_rotate_and_revoke(gateway_relay):
    operator, _ = await paired(gateway_relay, Identity())
    member = Identity()
    scopes = ("operator.read", "operator.pairing")
    client, hello = await paired(gateway_relay, member, scopes=scopes)
    first = hello["payload"]["auth"]["deviceToken"]
    await client.close()
    client = await GatewayClient.open(port(gateway_relay))
    assert (await client.connect(member, token=first, scopes=scopes))["ok"]
    # A device rotating its own token, signed in with it, is shown the new one.
    rotated = await client.request("device.token.rotate", {"deviceId": member.device_id, "role": "operator"})
    old, own = first, rotated["payload"].get("token")
    assert rotated["ok"] and own and own != old and rotated["payload"]["role"] == "operator", rotated
    assert await client.expect_close() == 1008, "the role's sockets close when its token changes"
    # An operator rotating someone else's token does not see it; the old ones stop working.
    by_admin = await operator.request("device.token.rotate", {"deviceId": member.device_id, "role": "operator"})
    assert by_admin["ok"] and "token" not in by_admin["payload"], by_admin
    for stale_token in (old, own):
        stale = await GatewayClient.open(port(gateway_relay))
        res = await stale.connect(member, token=stale_token, scopes=scopes)
        assert res["error"]["details"]["code"] == "AUTH_DEVICE_TOKEN_MISMATCH", res
        assert res["error"]["details"]["recommendedNextStep"] == "update_auth_credentials", res
    fresh = await GatewayClient.open(port(gateway_relay))
    res = await fresh.connect(member, token="", scopes=scopes)
    assert res["ok"] and "deviceToken" not in res["payload"]["auth"], "a paired device may connect on its key; nothing is rotated for it"
    revoked = await operator.request("device.token.revoke", {"deviceId": member.device_id, "role": "operator"})
    assert revoked["ok"] and revoked["payload"]["role"] == "operator"
    assert await fresh.expect_close() == 1008


async def test_shared_token_and_loopback_approval_are_opt_in(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "shared_token": "s3cret-shared"}
    relay = relay_factory(cfg)
    client = await GatewayClient.open(port(relay))
    res = await client.connect(Identity(), token="s3cret-shared")
    assert res["ok"], res
    other = await GatewayClient.open(port(relay))
    res = await other.connect(Identity(), token="guess")
    details = res["error"]["details"]
    assert details["code"] == "AUTH_TOKEN_MISMATCH", "a wrong shared token is a gateway-token mismatch, as real gateways say"
    assert details["canRetryWithDeviceToken"] is True and details["recommendedNextStep"] == "retry_with_device_token", details
    assert await other.expect_close() == 1008
    audit = await asyncio.to_thread(relay.audit)
    assert not any("s3cret-shared" in row["body"] for row in audit), "the shared token never reaches the audit"

    cfg2 = make_config()
    cfg2["gateway"] = {"listen": "127.0.0.1:0", "auto_approve_loopback": True}
    loopback = relay_factory(cfg2)
    client = await GatewayClient.open(port(loopback))
    assert (await client.connect(Identity()))["ok"]
    liar = await GatewayClient.open(port(loopback))
    res = await liar.connect(Identity(), token="not-a-token-of-mine")
    assert res["error"]["details"]["code"] == "AUTH_DEVICE_TOKEN_MISMATCH", "auto-approval still refuses a wrong token"
    assert await liar.expect_close() == 1008


@pytest.mark.parametrize("queue", [False, True])
async def test_background_node_and_foreground_only_commands(relay_factory, queue):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "queue_until_foreground": queue}
    relay = relay_factory(cfg)
    operator, _ = await paired(relay, Identity())
    node_identity = Identity()
    node, _ = await paired(relay, node_identity, role="node", scopes=(), mode="node", commands=("camera.snap", "location.get"))
    ack = await node.request("node.event", {"event": "app.state", "payloadJSON": json.dumps({"state": "background"})})
    assert ack["ok"]
    listing = await operator.request("node.list")
    assert listing["payload"]["nodes"][0]["foreground"] is False
    camera = asyncio.create_task(operator.request("node.invoke", {"nodeId": node_identity.device_id, "command": "camera.snap", "idempotencyKey": "bg"}, timeout=8))
    if not queue:
        refused = await camera
        assert refused["error"]["details"]["nodeError"]["code"] == "NODE_BACKGROUND_UNAVAILABLE", refused
    else:
        await asyncio.sleep(0.3)  # the invoke is held: nothing reaches the node while it is in the background
        assert not camera.done() and not [e for e in node.events if e.get("event") == "node.invoke.request"]
        await node.request("node.event", {"event": "app.state", "payload": {"state": "foreground"}})
        request = await node.event("node.invoke.request")
        await node.request("node.invoke.result", {"id": request["payload"]["id"], "nodeId": node_identity.device_id, "ok": True, "payloadJSON": "{}"})
        assert (await camera)["ok"]
    location = asyncio.create_task(operator.request("node.invoke", {"nodeId": node_identity.device_id, "command": "location.get", "idempotencyKey": "loc"}))
    request = await node.event("node.invoke.request")
    assert request["payload"]["command"] == "location.get", "background nodes still get commands that need no foreground"
    await node.request("node.invoke.result", {"id": request["payload"]["id"], "nodeId": node_identity.device_id, "ok": True, "payloadJSON": "{}"})
    assert (await location)["ok"]


async def test_connect_must_come_within_the_handshake_timeout(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "handshake_timeout_ms": 300}
    relay = relay_factory(cfg)
    client = await GatewayClient.open(port(relay))
    started = time.monotonic()
    assert await client.expect_close() == 1008
    assert time.monotonic() - started < 3


async def test_presence_describe_abort_and_stop(relay_factory):
    cfg = make_config(echo={"delay_ms": 400})
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    operator, hello = await paired(relay, Identity())
    version = hello["payload"]["snapshot"]["stateVersion"]["presence"]
    node_identity = Identity()
    node, _ = await paired(relay, node_identity, role="node", scopes=(), mode="node", commands=("camera.snap",))
    presence = await operator.event("presence", where=lambda p: any(e["deviceId"] == node_identity.device_id for e in p["presence"]))
    assert presence["stateVersion"]["presence"] > version, presence
    described = await operator.request("node.describe", {"nodeId": node_identity.device_id})
    assert described["payload"]["nodeId"] == node_identity.device_id and described["payload"]["connected"] is True

    started = await operator.request("chat.send", {"sessionKey": "s1", "message": "slow answer", "idempotencyKey": "abort-me"})
    assert started["payload"]["status"] == "started"
    again = await operator.request("chat.send", {"sessionKey": "s1", "message": "slow answer", "idempotencyKey": "abort-me"})
    assert again["payload"]["status"] == "in_flight", again
    aborted = await operator.request("chat.abort", {"sessionKey": "s1"})
    assert aborted["payload"]["runIds"] == ["abort-me"], aborted
    event = await operator.event("chat", where=lambda p: p.get("state") == "aborted")
    assert event["payload"]["runId"] == "abort-me"

    await operator.request("chat.send", {"sessionKey": "s2", "message": "another slow one", "idempotencyKey": "stop-me"})
    stop = await operator.request("chat.send", {"sessionKey": "s2", "message": "/stop", "idempotencyKey": "stopper"})
    assert stop["payload"]["status"] == "aborted" and stop["payload"]["runIds"] == ["stop-me"], stop


async def test_chat_history_of_large_messages_is_bounded_and_keeps_the_newest(gateway_relay):
    operator, _ = await paired(gateway_relay, Identity())
    big = "y" * 700_000
    for index in range(7):
        res = await operator.request("chat.send", {"sessionKey": "big", "message": f"{index} {big}", "idempotencyKey": f"big-{index}"}, timeout=20)
        assert res["ok"], res
        await operator.event("chat", timeout=20, where=lambda p, i=index: p.get("state") == "final" and p.get("runId") == f"big-{i}")
    history = await operator.request("chat.history", {"sessionKey": "big", "limit": 1000}, timeout=20)
    messages = history["payload"]["messages"]
    texts = [m["content"][0]["text"] for m in messages]
    assert texts[-1] == f"echo: 6 {big}", "the newest message is always there"
    assert 0 < len(messages) < 14, f"14 messages of 0.7 MB do not fit one answer's 8 MiB: {len(messages)}"
    assert sum(len(t) for t in texts) <= 8 << 20
