"""`clawrelay devices revoke` sticks in every protocol: a revoked device's new pairing requests are
refused (until `devices allow`), `devices list` shows one row per device, and `devices allow`
lets it ask again as the same device. (`clawrelay chat` against it: test_chat_client.py.)"""
from __future__ import annotations

import asyncio

from companion_client import CompanionClient, rest, start_companion
from discoclaw_client import discoclaw_config, http, register
from conftest import Client, async_wait_for, auth, make_config, pair_and_approve, pair_first_admin, pair_request
from gateway_client import GatewayClient, Identity, paired


def rows_of(relay, device_id: str) -> list[dict]:
    return [d for d in relay.devices() if d["deviceId"] == device_id]


async def test_a_revoked_clawline_device_is_rejected_until_allowed_then_waits_for_approval(relay):
    admin = await pair_first_admin(relay)
    admin_client, _ = await auth(relay, admin)
    member = await pair_and_approve(relay, admin_client)
    await asyncio.to_thread(relay.cli, "devices", "revoke", member.device_id)

    again = await Client.connect(relay, "again")
    await again.send_json(pair_request(member.device_id, "Second"))
    result = await again.expect("pair_result", success=False)
    assert result["reason"] == "pair_rejected", result
    assert [r["status"] for r in await asyncio.to_thread(rows_of, relay, member.device_id)] == ["revoked"]

    allowed = await asyncio.to_thread(relay.cli, "devices", "allow", member.device_id)
    assert f"clawrelay devices approve {member.device_id}" in allowed.stdout, allowed.stdout
    waiting = await Client.connect(relay, "waiting")
    await waiting.send_json(pair_request(member.device_id, "Second"))
    await async_wait_for(lambda: [r["status"] for r in rows_of(relay, member.device_id)] == ["pending"], what="one pending row")
    await asyncio.to_thread(relay.cli, "devices", "approve", member.device_id)
    approved = await waiting.recv_until(lambda f: f.get("type") == "pair_result")
    assert approved[0]["success"] is True, approved
    assert [r["status"] for r in await asyncio.to_thread(rows_of, relay, member.device_id)] == ["approved"]


async def test_a_device_revoked_while_it_waits_hears_pair_rejected_and_stays_revoked(relay):
    admin = await pair_first_admin(relay)
    await auth(relay, admin)
    waiting = await Client.connect(relay, "waiting")
    device_id = "5b8f0e52-8d1c-4c8e-9a53-2f4b7c1d9e01"
    await waiting.send_json(pair_request(device_id, "Tablet"))
    await async_wait_for(lambda: rows_of(relay, device_id), what="the pending row")
    await asyncio.to_thread(relay.cli, "devices", "revoke", device_id)
    result = await waiting.expect("pair_result", success=False)
    assert result["reason"] == "pair_rejected", result
    rows = await asyncio.to_thread(rows_of, relay, device_id)
    assert [(r["status"], r["userId"], r["claimedName"]) for r in rows] == [("revoked", None, "Tablet")], rows
    unknown = await asyncio.to_thread(relay.cli, "devices", "revoke", "0e2d3c9a-1111-4222-8333-444455556666", check=False)
    assert unknown.returncode == 1 and "nothing was revoked" in unknown.stderr, unknown


async def test_the_gateway_refuses_a_revoked_device_with_openclaws_pairing_rejected(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    identity = Identity()
    client, _ = await paired(relay, identity)
    await asyncio.to_thread(relay.cli, "devices", "revoke", identity.device_id)
    assert await client.expect_close() == 1008
    retry = await GatewayClient.open(relay.listeners["gateway"][1])
    refused = await retry.connect(identity)
    error = refused["error"]
    assert error["code"] == "NOT_PAIRED" and error["details"]["code"] == "PAIRING_REJECTED", refused
    assert error["details"]["pauseReconnect"] is True and error["details"]["deviceId"] == identity.device_id, refused
    assert error["message"] == f"this device was revoked: run clawrelay devices allow {identity.device_id} on the relay", refused
    assert await retry.expect_close() == 1008
    assert [r["status"] for r in await asyncio.to_thread(rows_of, relay, identity.device_id)] == ["revoked"]


async def test_a_revoked_companion_device_is_closed_and_refused_until_allowed(relay_factory, tmp_path):
    relay = start_companion(relay_factory, tmp_path)
    phone = await CompanionClient.connect(relay, device_id="phone-1", name="phone")
    device_id = "companion:phone-1"
    await asyncio.to_thread(relay.cli, "devices", "revoke", device_id)
    await asyncio.wait_for(phone.closed.wait(), 5)
    assert (phone.close_code, phone.close_reason) == (1008, "Device revoked")
    refused = await CompanionClient.connect(relay, device_id="phone-1", name="refused", welcome=False)
    await asyncio.wait_for(refused.closed.wait(), 5)
    assert (refused.close_code, refused.close_reason, refused.frames) == (1008, "Device revoked", [])
    answer = await asyncio.to_thread(rest, relay, "GET", "/api/projects", headers={"x-device-id": "phone-1"})
    assert answer.status == 403, answer
    assert answer.json()["message"] == f"this device was revoked: run clawrelay devices allow {device_id} on the relay"

    await asyncio.to_thread(relay.cli, "devices", "allow", device_id)
    back = await CompanionClient.connect(relay, device_id="phone-1", name="back")
    assert back.welcome["type"] == "welcome"
    await async_wait_for(lambda: [r["status"] for r in rows_of(relay, device_id)] == ["approved"], what="approved again")


def test_a_denylisted_discoclaw_device_is_refused_and_allowed_back_at_once(relay_factory):
    """DiscoClaw devices authenticate every request from an index in memory: `devices allow` must reach it."""
    relay = relay_factory(discoclaw_config())
    phone = register(relay)
    assert http(relay, "GET", "/auth/me", token=phone.token).status == 200
    relay.cli("devices", "deny", phone.device_id)
    assert http(relay, "GET", "/auth/me", token=phone.token).status == 401
    relay.cli("devices", "allow", phone.device_id)
    assert http(relay, "GET", "/auth/me", token=phone.token).status == 200, "allowed again without a restart"
    relay.cli("devices", "revoke", phone.device_id)
    assert http(relay, "GET", "/auth/me", token=phone.token).status == 401
    allowed = relay.cli("devices", "allow", phone.device_id)
    assert "registers again" in allowed.stdout and http(relay, "GET", "/auth/me", token=phone.token).status == 401, allowed.stdout
