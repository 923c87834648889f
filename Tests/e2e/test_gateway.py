"""OpenClaw gateway v3 downstream over the wire, as the real binary answers it: pairing through the CLI,
the pre-auth size limit, chat seen by Clawline devices, pair links, a graceful stop, the shared token
kept out of the audit, and bounded history from the store. The protocol logic (connect checks, device
signatures, tokens per role, nodes, chat runs, presence) is tested in memory in
Tests/GatewayBridgeTests."""
import asyncio
import json

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


async def test_first_frame_must_be_connect_and_small(gateway_relay):
    client = await GatewayClient.open(port(gateway_relay))
    res = await client.request("node.list")
    assert res["ok"] is False and res["error"]["code"] == "INVALID_REQUEST"
    assert await client.expect_close() == 1008
    big = await GatewayClient.open(port(gateway_relay))
    await big.ws.send(json.dumps({"type": "req", "id": "1", "method": "connect", "params": {"pad": "x" * 70_000}}))
    assert await big.expect_close() == 1009


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
