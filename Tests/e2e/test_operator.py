"""Operator CLI on a running relay: devices list / approve / deny / revoke."""

import asyncio
import time

from conftest import (
    UUID4_RE,
    Client,
    assert_pair_success,
    async_wait_for,
    auth,
    auth_frame,
    is_assistant_final,
    message_frame,
    new_device_id,
    pair_and_approve,
    pair_request,
    setup_admin,
)

FIELDS = {"deviceId", "userId", "claimedName", "isAdmin", "status", "tokenDelivered", "createdAt", "lastSeenAt"}


async def cli(relay, *args):
    return await asyncio.to_thread(relay.cli, *args)


async def pending(relay, name="Pending"):
    device_id = new_device_id()
    client = await Client.connect(relay, name)
    await client.send_json(pair_request(device_id, name))
    await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") == "pending", what=f"{name} pending")
    return device_id, client


async def test_devices_list_shape_and_statuses(relay):
    admin, admin_client = await setup_admin(relay)
    member = await pair_and_approve(relay, admin_client, name="Member")
    pending_id, _ = await pending(relay)
    entries = {e["deviceId"]: e for e in await asyncio.to_thread(relay.devices)}
    assert set(entries) == {admin.device_id, member.device_id, pending_id}, entries
    for entry in entries.values():
        assert FIELDS <= set(entry), f"missing fields in {entry}"
        assert entry["lastSeenAt"] is None or isinstance(entry["lastSeenAt"], int), entry
        assert isinstance(entry["createdAt"], int) and entry["createdAt"] > 1_600_000_000_000, entry
    assert entries[admin.device_id]["status"] == "approved" and entries[admin.device_id]["isAdmin"] is True
    assert entries[admin.device_id]["lastSeenAt"] is not None, "admin authenticated"
    assert entries[member.device_id]["status"] == "approved" and entries[member.device_id]["isAdmin"] is False
    assert entries[member.device_id]["userId"] == member.user_id
    assert entries[member.device_id]["claimedName"] == "Member"
    assert entries[pending_id]["status"] == "pending" and entries[pending_id]["claimedName"] == "Pending"


async def test_cli_approve_onto_existing_user_delivers_pair_result_live(relay):
    admin, admin_client = await setup_admin(relay)
    device_id, requester = await pending(relay)
    await cli(relay, "devices", "approve", device_id, "--user", admin.user_id)
    result = await requester.expect("pair_result", timeout=5)
    assert_pair_success(result, device_id)
    assert result["userId"] == admin.user_id
    entry = await async_wait_for(lambda: relay.device(device_id)["tokenDelivered"] and relay.device(device_id),
                                 what="tokenDelivered")
    assert entry["status"] == "approved" and entry["userId"] == admin.user_id, entry


async def test_cli_approve_without_user_creates_a_new_account(relay):
    admin, _ = await setup_admin(relay)
    device_id, requester = await pending(relay)
    await cli(relay, "devices", "approve", device_id)
    result = await requester.expect("pair_result", timeout=5)
    assert_pair_success(result, device_id)
    assert UUID4_RE.match(result["userId"]) and result["userId"] != admin.user_id, result


async def test_cli_deny_of_a_pending_request_sends_pair_denied(relay):
    await setup_admin(relay)
    device_id, requester = await pending(relay)
    await cli(relay, "devices", "deny", device_id)
    result = await requester.expect("pair_result", timeout=5)
    assert result.get("success") is False and result.get("reason") == "pair_denied", result
    await requester.expect_close(1000)
    entry = await asyncio.to_thread(relay.device, device_id)
    assert entry is None or entry["status"] != "pending", entry


async def test_cli_deny_of_a_paired_device_denylists_it(relay):
    admin, admin_client = await setup_admin(relay)
    member = await pair_and_approve(relay, admin_client, name="Member")
    await cli(relay, "devices", "deny", member.device_id)
    assert (await asyncio.to_thread(relay.device, member.device_id))["status"] == "denied"
    for _ in range(2):  # a denylisted device keeps being rejected
        again = await Client.connect(relay, "again")
        await again.send_json(pair_request(member.device_id))
        result = await again.expect("pair_result", timeout=5)
        assert result.get("success") is False and result.get("reason") == "pair_rejected", result
        assert "token" not in result, result
        await again.expect_close(1000)
    client = await Client.connect(relay, "auth-denied")
    await client.send_json(auth_frame(member))
    result = await client.expect("auth_result")
    assert result.get("success") is False and result.get("reason") in ("token_revoked", "auth_failed"), result
    await client.expect_close(1008)


async def test_cli_revoke_closes_live_session_within_one_second(relay):
    admin, admin_client = await setup_admin(relay)
    member = await pair_and_approve(relay, admin_client, name="Member")
    member_client, _ = await auth(relay, member)
    await cli(relay, "devices", "revoke", member.device_id)
    revoked_at = time.monotonic()
    frames = await member_client.expect_close(1008, timeout=3)
    elapsed = time.monotonic() - revoked_at
    assert frames and frames[-1].get("type") == "error" and frames[-1].get("code") == "token_revoked", frames
    assert elapsed <= 1.0, f"revocation took {elapsed:.2f}s to close the socket"
    assert (await asyncio.to_thread(relay.device, member.device_id))["status"] == "revoked"
    await admin_client.assert_open()

    again = await Client.connect(relay, "after-revoke")
    await again.send_json(auth_frame(member))
    await again.expect("auth_result", success=False, reason="token_revoked")
    await again.expect_close(1008)


async def test_revocation_aborts_the_stream_and_drops_the_queue(relay_factory):
    relay = relay_factory(echo={"delay_ms": 400})
    admin, admin_client = await setup_admin(relay)
    member = await pair_and_approve(relay, admin_client, user_id=admin.user_id, name="Member")
    member_client, _ = await auth(relay, member)
    first, second = message_frame("in flight"), message_frame("queued")
    await member_client.send_json(first)
    await member_client.send_json(second)
    echo, _ = await member_client.recv_until(lambda f: f.get("role") == "user" and f.get("content") == "in flight")
    update, _ = await member_client.recv_until(
        lambda f: f.get("role") == "assistant" and f.get("streaming") is True)

    await cli(relay, "devices", "revoke", member.device_id)
    frames = await member_client.expect_close(1008, timeout=3)
    errors = [f for f in frames if f.get("type") == "error"]
    assert [e["code"] for e in errors] == ["token_revoked"], f"no per-message errors on revocation: {frames}"
    assert not any(is_assistant_final()(f) for f in frames), frames

    # the sibling never gets a final for the aborted stream nor output for the dropped message
    await admin_client.expect_silence(3.0, ignore=lambda f: not is_assistant_final()(f))
    await admin_client.close()
    client, result = await auth(relay, admin, last_message_id=echo["id"])
    replayed = [await client.recv_json() for _ in range(result["replayCount"])]
    assert not any(f.get("role") == "assistant" for f in replayed), f"aborted stream must not be finalized: {replayed}"


async def test_cli_deny_of_an_unknown_id_says_so_and_allow_undoes_a_denial(relay):
    admin, admin_client = await setup_admin(relay)
    unknown = relay.cli("devices", "deny", "0e2d3c9a-1111-4222-8333-444455556666", check=False)
    assert unknown.returncode == 1 and "nothing was denied" in unknown.stderr, unknown.stderr
    member = await pair_and_approve(relay, admin_client, name="Member")
    await cli(relay, "devices", "deny", member.device_id)
    assert relay.cli("devices", "allow", member.device_id).returncode == 0
    client, result = await auth(relay, member)
    assert result["success"] is True
    assert relay.cli("devices", "allow", member.device_id, check=False).returncode == 1  # not denied any more


async def test_devices_list_has_a_header_and_the_columns_an_operator_needs(relay):
    await setup_admin(relay)
    lines = relay.cli("devices", "list").stdout.splitlines()
    assert lines[0].split()[:4] == ["DEVICE", "PROTOCOL", "STATUS", "PRESENCE"] and "LAST SEEN" in lines[0], lines
    assert "clawline" in lines[1] and "approved admin" in lines[1] and "ago" in lines[1], lines
