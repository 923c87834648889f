"""Relay A's `openclaw` backend is an operator account on relay B's gateway listener (B answers with echo)."""
import asyncio
import json
import socket
import time

from conftest import make_config, message_frame, setup_admin, is_assistant_final


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accounts(relay) -> list[dict]:
    return json.loads(relay.cli("accounts", "--json").stdout)


def wait_account(relay, state, timeout=20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        current = accounts(relay)
        if current and current[0]["state"] == state:
            return current[0]
        assert time.monotonic() < deadline, f"account never reached {state}: {current}"
        time.sleep(0.1)


def start_pair(relay_factory):
    b_port = free_port()
    b_cfg = make_config()
    b_cfg["gateway"] = {"listen": f"127.0.0.1:{b_port}", "tick_interval_ms": 500}
    relay_b = relay_factory(b_cfg)
    a_cfg = make_config(clawline={"backend": "up"})
    a_cfg["backends"].append({"name": "up", "kind": "openclaw", "url": f"ws://127.0.0.1:{b_port}"})
    relay_a = relay_factory(a_cfg)
    return relay_a, relay_b


async def test_pairing_on_b_then_clawline_chat_through_a_reaches_bs_echo(relay_factory):
    relay_a, relay_b = start_pair(relay_factory)
    waiting = await asyncio.to_thread(wait_account, relay_a, "awaiting_approval")
    assert "requestId" in waiting["detail"], waiting
    pending = [d for d in await asyncio.to_thread(relay_b.devices) if d["status"] == "pending" and d["protocol"] == "gateway"]
    assert len(pending) == 1, pending
    await asyncio.to_thread(relay_b.cli, "devices", "approve", pending[0]["deviceId"])
    await asyncio.to_thread(wait_account, relay_a, "connected")

    _, client = await setup_admin(relay_a)
    await client.send_json(message_frame("through two relays"))
    final, frames = await client.recv_until(is_assistant_final(), timeout=10)
    assert final["content"] == "echo: through two relays", final
    assert any(f.get("streaming") is True for f in frames), "B's deltas stream through A"
    token_files = list((relay_a.data_dir / "accounts").glob("*.token"))
    assert token_files and (token_files[0].stat().st_mode & 0o777) == 0o600


async def test_killing_b_makes_a_retry_and_recover_without_a_restart(relay_factory):
    relay_a, relay_b = start_pair(relay_factory)
    await asyncio.to_thread(wait_account, relay_a, "awaiting_approval")
    pending = [d for d in await asyncio.to_thread(relay_b.devices) if d["status"] == "pending"]
    await asyncio.to_thread(relay_b.cli, "devices", "approve", pending[0]["deviceId"])
    await asyncio.to_thread(wait_account, relay_a, "connected")

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
