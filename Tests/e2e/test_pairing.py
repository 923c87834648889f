"""Pairing end to end: the first admin and its record in `devices list`, an approval by the admin
device, a race for the first admin on the real store, pending requests across a restart.

The protocol's rules (denials, the pending book and its time limit, re-pairing, validation,
limits) are tested in memory: `Tests/ClawlineBridgeTests/ClawlinePairingTests.swift`.
"""

import asyncio
import time
import uuid

from conftest import (
    Client,
    Device,
    assert_pair_success,
    async_wait_for,
    auth,
    jwt_parts,
    new_device_id,
    pair_first_admin,
    pair_request,
    setup_admin,
)


def is_approval_for(device_id):
    return lambda f: f.get("type") == "pair_approval_request" and f.get("deviceId") == device_id


async def request_pairing(relay, device_id, name="Pending"):
    client = await Client.connect(relay, f"{name}-pairing")
    await client.send_json(pair_request(device_id, name))
    return client


async def test_first_device_becomes_admin_with_valid_token(relay):
    before_ms = int(time.time() * 1000) - 2000
    device_id = new_device_id()
    client = await Client.connect(relay)
    await client.send_json(pair_request(device_id, "Kaywood"))
    result = await client.expect("pair_result")
    assert_pair_success(result, device_id)
    header, claims, _ = jwt_parts(result["token"])
    assert header.get("alg") == "HS256", header
    assert isinstance(claims.get("iat"), int) and isinstance(claims.get("exp"), int), claims
    assert claims["exp"] - claims["iat"] == 31536000, claims
    assert abs(claims["iat"] - time.time()) < 60, claims
    await client.close()

    entry = await async_wait_for(lambda: (relay.device(device_id) or {}).get("tokenDelivered") and relay.device(device_id),
                                 what="devices list entry with tokenDelivered=true")
    assert entry["userId"] == result["userId"], entry
    assert entry["isAdmin"] is True, entry
    assert entry["status"] == "approved", entry
    assert entry["tokenDelivered"] is True, entry
    assert entry["claimedName"] == "Kaywood", entry
    assert isinstance(entry["createdAt"], int) and entry["createdAt"] >= before_ms, entry
    assert entry["createdAt"] <= int(time.time() * 1000) + 2000, entry
    assert entry["lastSeenAt"] is None, entry


async def test_admin_approves_second_device_onto_new_account(relay):
    admin, admin_client = await setup_admin(relay)
    device_id = new_device_id()
    requester = await Client.connect(relay, "requester")
    await requester.send_json(pair_request(device_id, "Phone B"))
    request, _ = await admin_client.recv_until(is_approval_for(device_id))
    assert request["claimedName"] == "Phone B", request
    assert request["deviceInfo"]["platform"] == "iOS" and request["deviceInfo"]["model"] == "iPhone 15", request

    new_user = str(uuid.uuid4())
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "userId": new_user, "approve": True})
    result = await requester.expect("pair_result")
    assert_pair_success(result, device_id)
    assert result["userId"] == new_user and new_user != admin.user_id

    entry = await async_wait_for(lambda: relay.device(device_id), what="approved entry")
    assert entry["status"] == "approved" and entry["isAdmin"] is False, entry
    assert entry["userId"] == new_user, entry
    await async_wait_for(lambda: relay.device(device_id)["tokenDelivered"] is True, what="tokenDelivered=true")

    # the new device can authenticate
    _, auth_result = await auth(relay, Device(device_id, result["token"], result["userId"]))
    assert auth_result["userId"] == new_user


async def test_first_admin_race_has_one_winner_and_loser_stays_pending(relay):
    a, b = new_device_id(), new_device_id()
    ca, cb = await Client.connect(relay, "racer-a"), await Client.connect(relay, "racer-b")
    await asyncio.gather(ca.send_json(pair_request(a, "A")), cb.send_json(pair_request(b, "B")))

    async def outcome(client):
        try:
            return await client.recv_json(timeout=2.0)
        except AssertionError:
            return None

    results = await asyncio.gather(outcome(ca), outcome(cb))
    winners = [(r, d) for r, d in zip(results, (a, b)) if r and r.get("success") is True]
    assert len(winners) == 1, f"exactly one first admin expected: {results}"
    assert all(r is None for r in results if r is not winners[0][0]), f"loser must stay pending: {results}"
    win_result, win_id = winners[0]
    lose_id, lose_client = (b, cb) if win_id == a else (a, ca)
    entries = {e["deviceId"]: e for e in relay.devices()}
    assert entries[win_id]["isAdmin"] is True and entries[win_id]["status"] == "approved", entries
    assert entries[lose_id]["status"] == "pending", entries

    admin_client, _ = await auth(relay, Device(win_id, win_result["token"], win_result["userId"]))
    await admin_client.recv_until(is_approval_for(lose_id))
    await admin_client.send_json({"type": "pair_decision", "deviceId": lose_id, "userId": win_result["userId"], "approve": True})
    result = await lose_client.expect("pair_result")
    assert_pair_success(result, lose_id)
    entry = await async_wait_for(lambda: relay.device(lose_id), what="loser entry")
    assert entry["isAdmin"] is False, entry


async def test_pending_requests_do_not_survive_restart(relay):
    admin = await pair_first_admin(relay)
    device_id = new_device_id()
    requester = await request_pairing(relay, device_id)
    await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") == "pending", what="pending entry")
    await requester.close()
    relay.restart()
    entry = relay.device(device_id)
    assert entry is None or entry["status"] != "pending", entry

    admin_client, _ = await auth(relay, admin)
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "userId": str(uuid.uuid4()), "approve": True})
    await admin_client.expect_error("invalid_message")
    # the device must ask again, and the new request reaches the admin
    again = await request_pairing(relay, device_id)
    await admin_client.recv_until(is_approval_for(device_id))
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "userId": str(uuid.uuid4()), "approve": True})
    assert_pair_success(await again.expect("pair_result"), device_id)
