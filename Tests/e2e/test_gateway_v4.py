"""OpenClaw gateway protocol v4 end to end: the methods apps call first (and the gateway identity kept
across a restart), and relay-to-relay in both version pairings. Range negotiation, hello-ok's fields,
per-connection seq and device tokens per role are tested in memory in Tests/GatewayBridgeTests."""
import asyncio

import pytest

from conftest import is_assistant_final, make_config, message_frame, setup_admin
from gateway_client import OPENCLAWKIT_IOS, Identity, paired
from test_relay_to_relay import free_port, wait_account

READ_WRITE = ("operator.read", "operator.write")


@pytest.fixture
def v4_relay(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "tick_interval_ms": 400}
    return relay_factory(cfg)


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
