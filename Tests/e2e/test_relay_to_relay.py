"""Relay A's `openclaw` backend is an operator account on relay B's gateway listener (B answers with echo)."""
import asyncio
import json
import socket
import time

from conftest import accounts, free_port, is_assistant_final, make_config, message_frame, setup_admin, wait_account





def start_pair(relay_factory):
    b_port = free_port()
    b_cfg = make_config()
    b_cfg["gateway"] = {"listen": f"127.0.0.1:{b_port}", "tick_interval_ms": 500}
    relay_b = relay_factory(b_cfg)
    a_cfg = make_config(clawline={"backend": "up"})
    a_cfg["backends"].append({"name": "up", "kind": "openclaw", "url": f"ws://127.0.0.1:{b_port}"})
    relay_a = relay_factory(a_cfg)
    return relay_a, relay_b


async def approved_pair(relay_factory):
    """A and B with A's account approved on B with the CLI, and connected."""
    relay_a, relay_b = start_pair(relay_factory)
    await asyncio.to_thread(wait_account, relay_a, "awaiting_approval")
    pending = [d for d in await asyncio.to_thread(relay_b.devices) if d["status"] == "pending"]
    await asyncio.to_thread(relay_b.cli, "devices", "approve", pending[0]["deviceId"])
    await asyncio.to_thread(wait_account, relay_a, "connected")
    return relay_a, relay_b


async def test_pairing_on_b_then_clawline_chat_through_a_reaches_bs_echo(relay_factory):
    from gateway_client import Identity, paired
    relay_a, relay_b = start_pair(relay_factory)
    waiting = await asyncio.to_thread(wait_account, relay_a, "awaiting_approval")
    assert "requestId" in waiting["detail"], waiting
    pending = [d for d in await asyncio.to_thread(relay_b.devices) if d["status"] == "pending" and d["protocol"] == "gateway"]
    assert len(pending) == 1, pending
    # B's own operator approves A's account with device.pair.approve.
    operator, _ = await paired(relay_b, Identity())
    listing = await operator.request("device.pair.list")
    request_id = next(p["requestId"] for p in listing["payload"]["pending"] if p["deviceId"] == pending[0]["deviceId"])
    approved = await operator.request("device.pair.approve", {"requestId": request_id})
    assert approved["ok"], approved
    await asyncio.to_thread(wait_account, relay_a, "connected")

    _, client = await setup_admin(relay_a)
    await client.send_json(message_frame("through two relays"))
    final, frames = await client.recv_until(is_assistant_final(), timeout=10)
    assert final["content"] == "echo: through two relays", final
    assert any(f.get("streaming") is True for f in frames), "B's deltas stream through A"
    token_files = list((relay_a.data_dir / "accounts").glob("*.token"))
    assert token_files and (token_files[0].stat().st_mode & 0o777) == 0o600


async def test_a_clawline_image_and_upload_reach_bs_backend_as_gateway_attachments(relay_factory):
    from conftest import send_picture_and_upload
    relay_a, relay_b = await approved_pair(relay_factory)
    admin, client = await setup_admin(relay_a)
    # A reads the upload from its data dir and sends both as chat.send attachments; B's echo names them.
    await send_picture_and_upload(relay_a, admin, client, "two pictures")


async def test_killing_b_makes_a_retry_and_recover_without_a_restart(relay_factory):
    relay_a, relay_b = await approved_pair(relay_factory)

    relay_b.kill()
    await asyncio.to_thread(wait_account, relay_a, "retrying")
    _, client = await setup_admin(relay_a)
    await client.send_json(message_frame("while b is down"))
    error, _ = await client.recv_until(lambda f: f.get("type") == "error", timeout=10)
    assert error["code"] == "server_error", error

    relay_b.restart()
    await asyncio.to_thread(wait_account, relay_a, "connected", 40)
    await client.send_json(message_frame("b is back"))
    final, _ = await client.recv_until(is_assistant_final("echo: b is back"), timeout=10)
    assert final["streaming"] is False


def wait_named(relay, name_prefix, state, timeout=20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        match = [a for a in accounts(relay) if a["name"].startswith(name_prefix) and a["state"] == state]
        if match:
            return match[0]
        assert time.monotonic() < deadline, f"no {name_prefix}* account reached {state}: {accounts(relay)}"
        time.sleep(0.1)


async def test_node_passthrough_carries_an_invoke_from_b_to_a_node_on_a(relay_factory):
    from gateway_client import GatewayClient, Identity, paired
    b_port = free_port()
    b_cfg = make_config()
    b_cfg["gateway"] = {"listen": f"127.0.0.1:{b_port}"}
    relay_b = relay_factory(b_cfg)
    a_cfg = make_config()
    a_cfg["gateway"] = {"listen": "127.0.0.1:0"}
    a_cfg["backends"].append({"name": "up", "kind": "openclaw", "url": f"ws://127.0.0.1:{b_port}", "expose_nodes": True})
    relay_a = relay_factory(a_cfg)

    node_identity = Identity()
    node, _ = await paired(relay_a, node_identity, role="node", scopes=(), mode="node", commands=("camera.snap",))
    passthrough = await asyncio.to_thread(wait_named, relay_a, "up/node-", "awaiting_approval")
    assert passthrough["detail"].startswith("awaiting approval"), passthrough
    for device in await asyncio.to_thread(relay_b.devices):
        if device["status"] == "pending":
            await asyncio.to_thread(relay_b.cli, "devices", "approve", device["deviceId"])
    await asyncio.to_thread(wait_named, relay_a, "up/node-", "connected", 30)

    operator, _ = await paired(relay_b, Identity())
    listing = await operator.request("node.list")
    upstream_nodes = listing["payload"]["nodes"]
    assert len(upstream_nodes) == 1 and upstream_nodes[0]["commands"] == ["camera.snap"], listing
    upstream_id = upstream_nodes[0]["nodeId"]
    assert upstream_id != node_identity.device_id, "B sees the relay-held identity, not the device's own key"

    call = asyncio.create_task(operator.request("node.invoke", {
        "nodeId": upstream_id, "command": "camera.snap", "params": {"quality": 0.5}, "idempotencyKey": "pt-1"}, timeout=10))
    request = await node.event("node.invoke.request", timeout=10)
    assert json.loads(request["payload"]["paramsJSON"]) == {"quality": 0.5}
    await node.request("node.invoke.result", {"id": request["payload"]["id"], "nodeId": node_identity.device_id, "ok": True,
                                              "payloadJSON": json.dumps({"format": "jpg", "base64": "QUJD"})})
    result = await call
    assert result["ok"] and result["payload"]["payload"] == {"format": "jpg", "base64": "QUJD"}, result

    await node.close()
    deadline = time.monotonic() + 10
    while (await operator.request("node.list"))["payload"]["nodes"]:
        assert time.monotonic() < deadline, "the upstream node link outlived the device"
        await asyncio.sleep(0.1)


async def upstream_pair(relay_factory, session_key: str | None):
    """Relay A's Clawline answered by B's gateway (B answers with echo), A's account approved."""
    b_port = free_port()
    b_cfg = make_config()
    b_cfg["gateway"] = {"listen": f"127.0.0.1:{b_port}"}
    relay_b = relay_factory(b_cfg)
    a_cfg = make_config(clawline={"backend": "up"})
    a_cfg["backends"].append({"name": "up", "kind": "openclaw", "url": f"ws://127.0.0.1:{b_port}",
                              **({"session_key": session_key} if session_key else {})})
    relay_a = relay_factory(a_cfg)
    await asyncio.to_thread(wait_account, relay_a, "awaiting_approval")
    pending = [d for d in await asyncio.to_thread(relay_b.devices) if d["status"] == "pending"]
    await asyncio.to_thread(relay_b.cli, "devices", "approve", pending[0]["deviceId"])
    await asyncio.to_thread(wait_account, relay_a, "connected")
    return relay_a, relay_b


async def upstream_history(operator, key: str) -> list[str]:
    res = await operator.request("chat.history", {"sessionKey": key})
    assert res["ok"], res
    return [m["content"][0]["text"] for m in res["payload"]["messages"]]


async def test_a_reset_on_a_resets_a_fixed_upstream_session_on_b(relay_factory):
    """`/new` on A: with `session_key`, A asks B for `sessions.reset` of that session (B's own
    reset: a fresh transcript there too)."""
    from gateway_client import Identity, paired
    relay_a, relay_b = await upstream_pair(relay_factory, "shared")
    _, client = await setup_admin(relay_a)
    await client.send_json(message_frame("before the reset"))
    await client.recv_until(is_assistant_final("echo: before the reset"), timeout=10)
    operator, _ = await paired(relay_b, Identity())
    assert await upstream_history(operator, "shared") == ["before the reset", "echo: before the reset"]

    await client.send_json(message_frame("/new"))
    await client.recv_until(lambda f: is_assistant_final()(f) and f["content"].startswith("Started a new session"), timeout=10)
    deadline = time.monotonic() + 10
    while await upstream_history(operator, "shared"):
        assert time.monotonic() < deadline, "B's session was not reset"
        await asyncio.sleep(0.05)

    # `/compact` is a gateway's own command: A passes it on, and B (here answered by echo) runs it.
    await client.send_json(message_frame("/compact"))
    await client.recv_until(is_assistant_final("echo keeps no context of its own to compact."), timeout=10)


async def test_after_a_reset_on_a_the_next_turn_has_a_fresh_upstream_session(relay_factory):
    """Without `session_key` each conversation has its own upstream session
    (`relay:<user>:<conversation>`); the reset conversation's successor gets a new one."""
    from gateway_client import Identity, paired
    relay_a, relay_b = await upstream_pair(relay_factory, None)
    _, client = await setup_admin(relay_a)
    await client.send_json(message_frame("first session"))
    await client.recv_until(is_assistant_final("echo: first session"), timeout=10)
    await client.send_json(message_frame("/reset"))
    await client.recv_until(lambda f: is_assistant_final()(f) and f["content"].startswith("Started a new session"), timeout=10)
    # Sent the moment the answer arrives, while the reset may still be under way: it waits for the
    # fresh conversation and goes there.
    await client.send_json(message_frame("second session"))
    await client.recv_until(is_assistant_final("echo: second session"), timeout=10)
    operator, _ = await paired(relay_b, Identity())
    keys = [s["key"] for s in (await operator.request("sessions.list"))["payload"]["sessions"] if s["key"].startswith("relay:")]
    assert len(keys) == 2, keys
    histories = sorted([await upstream_history(operator, key) for key in keys])
    assert histories == [["first session", "echo: first session"], ["second session", "echo: second session"]], histories
