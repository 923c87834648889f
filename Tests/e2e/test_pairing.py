"""Pairing: first admin, admin approval/denial, pending queue, TTL, re-pairing, validation, limits."""

import asyncio
import time
import uuid

import pytest

from conftest import (
    UUID4_RE,
    Client,
    Device,
    auth_frame,
    assert_pair_success,
    async_wait_for,
    auth,
    jwt_parts,
    new_device_id,
    pair_and_approve,
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


async def test_optional_device_info_fields_may_be_omitted(relay):
    device_id = new_device_id()
    client = await Client.connect(relay)
    await client.send_json({"type": "pair_request", "protocolVersion": 1, "deviceId": device_id,
                            "deviceInfo": {"platform": "iOS", "model": "iPhone 15"}})
    assert_pair_success(await client.recv_json(), device_id)


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


async def test_admin_approves_onto_existing_account(relay):
    admin, admin_client = await setup_admin(relay)
    sibling = await pair_and_approve(relay, admin_client, user_id=admin.user_id)
    assert sibling.user_id == admin.user_id
    _, result = await auth(relay, sibling)
    assert result["userId"] == admin.user_id


async def test_admin_denial_sends_pair_denied_and_closes(relay):
    admin, admin_client = await setup_admin(relay)
    device_id = new_device_id()
    requester = await request_pairing(relay, device_id)
    await admin_client.recv_until(is_approval_for(device_id))
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "approve": False})
    result = await requester.expect("pair_result", success=False, reason="pair_denied")
    assert "token" not in result and "userId" not in result, result
    await requester.expect_close(1000)
    await admin_client.assert_open()


async def test_pending_requests_are_delivered_when_an_admin_authenticates(relay):
    admin = await pair_first_admin(relay)
    device_id = new_device_id()
    requester = await request_pairing(relay, device_id, "Late")
    await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") == "pending", what="pending entry")

    admin_client = await Client.connect(relay, "admin")
    await admin_client.send_json(auth_frame(admin))
    await admin_client.expect("auth_result", success=True)  # auth_result precedes re-sent approvals
    request, _ = await admin_client.recv_until(is_approval_for(device_id))
    assert request["claimedName"] == "Late", request

    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "userId": str(uuid.uuid4()), "approve": True})
    assert_pair_success(await requester.expect("pair_result"), device_id)


async def test_pending_request_times_out_with_pair_timeout(relay_factory):
    relay = relay_factory(clawline={"pending_ttl_seconds": 1})
    admin, admin_client = await setup_admin(relay)
    device_id = new_device_id()
    started = time.monotonic()
    requester = await request_pairing(relay, device_id)
    result = await requester.expect("pair_result", timeout=6)
    assert result.get("success") is False and result.get("reason") == "pair_timeout", result
    assert time.monotonic() - started >= 0.8, "timed out before the configured TTL"
    await requester.expect_close(1000)
    await async_wait_for(lambda: relay.device(device_id) is None or relay.device(device_id)["status"] != "pending",
                         what="pending entry removed")
    # a decision for the expired request is treated as unknown; the admin socket stays open
    await admin_client.recv_until(is_approval_for(device_id))
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "userId": str(uuid.uuid4()), "approve": True})
    await admin_client.expect_error("invalid_message", skip=lambda f: f.get("type") == "pair_approval_request")
    await admin_client.assert_open()


async def test_pending_request_expires_while_requester_disconnected(relay_factory):
    relay = relay_factory(clawline={"pending_ttl_seconds": 1})
    admin = await pair_first_admin(relay)
    device_id = new_device_id()
    requester = await request_pairing(relay, device_id)
    await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") == "pending", what="pending entry")
    await requester.close()
    await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") != "pending", timeout=6,
                         what="pending entry to expire")
    admin_client, _ = await auth(relay, admin)
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "userId": str(uuid.uuid4()), "approve": True})
    await admin_client.expect_error("invalid_message")
    await admin_client.assert_open()


async def test_reconnecting_request_keeps_original_values_and_gets_result_on_new_socket(relay):
    admin, admin_client = await setup_admin(relay)
    device_id = new_device_id()
    first = await request_pairing(relay, device_id, "Original")
    request, _ = await admin_client.recv_until(is_approval_for(device_id))
    assert request["claimedName"] == "Original"
    await first.close()

    second = await Client.connect(relay, "reconnected")
    changed = pair_request(device_id, "Changed")
    changed["deviceInfo"] = {"platform": "iPadOS", "model": "iPad Pro"}
    await second.send_json(changed)
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "userId": str(uuid.uuid4()), "approve": True})
    assert_pair_success(await second.expect("pair_result"), device_id)
    entry = await async_wait_for(lambda: relay.device(device_id), what="entry")
    assert entry["claimedName"] == "Original", entry


async def test_reconnecting_request_does_not_reset_the_ttl(relay_factory):
    relay = relay_factory(clawline={"pending_ttl_seconds": 3})
    await pair_first_admin(relay)
    device_id = new_device_id()
    started = time.monotonic()
    first = await request_pairing(relay, device_id)
    await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") == "pending", what="pending entry")
    await asyncio.sleep(max(0.0, 2.0 - (time.monotonic() - started)))  # let 2 of the 3 s elapse
    await first.close()
    second = await request_pairing(relay, device_id)
    result = await second.expect("pair_result", timeout=6)
    elapsed = time.monotonic() - started
    assert result.get("success") is False and result.get("reason") == "pair_timeout", result
    assert elapsed < 4.4, f"pair_timeout after {elapsed:.1f}s: the reconnect reset the 3 s TTL"


async def test_denial_while_requester_disconnected_is_delivered_on_next_request(relay):
    admin, admin_client = await setup_admin(relay)
    device_id = new_device_id()
    first = await request_pairing(relay, device_id)
    await admin_client.recv_until(is_approval_for(device_id))
    await first.close()
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "approve": False})
    await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") != "pending", what="pending entry removed")

    again = await request_pairing(relay, device_id)
    result = await again.expect("pair_result", timeout=3)
    assert result.get("success") is False and result.get("reason") == "pair_denied", result
    await again.expect_close(1000)


async def test_approval_while_requester_disconnected_issues_token_on_next_request(relay):
    admin, admin_client = await setup_admin(relay)
    device_id = new_device_id()
    first = await request_pairing(relay, device_id)
    await admin_client.recv_until(is_approval_for(device_id))
    await first.close()
    await first.ws.wait_closed()
    new_user = str(uuid.uuid4())
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "userId": new_user, "approve": True})
    entry = await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") == "approved" and relay.device(device_id),
                                 what="approved entry")
    assert entry["tokenDelivered"] is False, entry

    again = await request_pairing(relay, device_id)
    result = await again.expect("pair_result", timeout=3)
    assert_pair_success(result, device_id)
    assert result["userId"] == new_user
    await async_wait_for(lambda: relay.device(device_id)["tokenDelivered"] is True, what="tokenDelivered=true")


async def test_one_crash_reissue_then_repairing_is_refused(relay):
    device_id = new_device_id()
    admin = await pair_first_admin(relay, device_id)
    await async_wait_for(lambda: (relay.device(device_id) or {}).get("tokenDelivered") is True, what="tokenDelivered=true")
    # tokenDelivered=true, lastSeenAt=null, created just now: one re-issue allowed
    client = await request_pairing(relay, device_id)
    result = await client.expect("pair_result")
    assert_pair_success(result, device_id)
    assert result["userId"] == admin.user_id
    await client.close()
    entry = await async_wait_for(lambda: relay.device(device_id), what="entry")
    assert entry["isAdmin"] is True and entry["lastSeenAt"] is not None, entry

    third = await request_pairing(relay, device_id)
    await third.expect_error("invalid_message")
    await third.expect_close(1008)


async def test_repairing_after_auth_is_refused(relay):
    admin = await pair_first_admin(relay)
    session, _ = await auth(relay, admin)
    await session.close()
    client = await request_pairing(relay, admin.device_id)
    await client.expect_error("invalid_message")
    await client.expect_close(1008)


async def test_auth_while_pending_is_device_not_approved(relay):
    await pair_first_admin(relay)
    device_id = new_device_id()
    requester = await request_pairing(relay, device_id)
    await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") == "pending", what="pending entry")
    other = await Client.connect(relay, "auth-while-pending")
    await other.send_json({"type": "auth", "protocolVersion": 1, "token": "pending.device.token", "deviceId": device_id})
    result = await other.expect("auth_result")
    assert result.get("success") is False and result.get("reason") == "device_not_approved", result
    await other.expect_close(None)


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


@pytest.mark.parametrize("version", ["missing", 2, "1", None, 1.5])
async def test_pair_request_with_bad_protocol_version_is_rejected_and_closed(relay, version):
    frame = pair_request(new_device_id())
    if version == "missing":
        del frame["protocolVersion"]
    else:
        frame["protocolVersion"] = version
    client = await Client.connect(relay)
    await client.send_json(frame)
    await client.expect_error("invalid_message")
    await client.expect_close(1008)


@pytest.mark.parametrize("device_id", ["ABC123", "", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", 12345, None])
async def test_pair_request_with_invalid_device_id_keeps_socket_open(relay, device_id):
    client = await Client.connect(relay)
    frame = pair_request("x")
    frame["deviceId"] = device_id
    await client.send_json(frame)
    await client.expect_error("invalid_message")
    await client.assert_open()


async def test_pair_request_without_device_id_keeps_socket_open(relay):
    client = await Client.connect(relay)
    frame = pair_request("x")
    del frame["deviceId"]
    await client.send_json(frame)
    await client.expect_error("invalid_message")
    await client.assert_open()


@pytest.mark.parametrize(
    "device_info",
    [
        "missing",
        None,
        {},
        "iPhone",
        {"platform": "iOS"},
        {"model": "iPhone 15"},
        {"platform": "", "model": "iPhone 15"},
        {"platform": "iOS", "model": ""},
        {"platform": None, "model": "iPhone 15"},
        {"platform": "iOS", "model": 15},
    ],
)
async def test_pair_request_with_invalid_device_info_keeps_socket_open(relay, device_info):
    client = await Client.connect(relay)
    frame = pair_request(new_device_id())
    if device_info == "missing":
        del frame["deviceInfo"]
    else:
        frame["deviceInfo"] = device_info
    await client.send_json(frame)
    await client.expect_error("invalid_message")
    await client.assert_open()
    assert relay.devices() == [], "an invalid request must not create an entry"


async def test_pair_request_rate_limit_closes_socket(relay_factory):
    relay = relay_factory(clawline={"pair_requests_per_minute": 2})
    await pair_first_admin(relay)
    device_id = new_device_id()
    client = await Client.connect(relay)
    for _ in range(2):
        await client.send_json(pair_request(device_id))
    await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") == "pending", what="pending entry")
    await client.send_json(pair_request(device_id))
    frames = await client.expect_close(1008)
    assert [f for f in frames if f.get("type") == "error"] == [frames[-1]], frames
    assert frames[-1]["code"] == "rate_limited", frames


async def test_pair_request_rate_limit_survives_reconnects(relay_factory):
    relay = relay_factory(clawline={"pair_requests_per_minute": 2})
    await pair_first_admin(relay)
    device_id = new_device_id()
    for _ in range(2):
        client = await request_pairing(relay, device_id)
        await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") == "pending", what="pending entry")
        await client.close()
    client = await request_pairing(relay, device_id)
    await client.expect_error("rate_limited")
    await client.expect_close(1008)


async def test_pending_queue_cap_returns_rate_limited(relay_factory):
    relay = relay_factory(clawline={"max_pending_requests": 2})
    await pair_first_admin(relay)
    ids = [new_device_id() for _ in range(3)]
    clients = []
    for device_id in ids[:2]:
        clients.append(await request_pairing(relay, device_id))
        await async_wait_for(lambda: (relay.device(device_id) or {}).get("status") == "pending", what="pending entry")
    third = await request_pairing(relay, ids[2])
    await third.expect_error("rate_limited")
    assert relay.device(ids[2]) is None or relay.device(ids[2])["status"] != "pending"


async def test_non_admin_pair_decision_is_invalid_message(relay):
    admin, admin_client = await setup_admin(relay)
    member = await pair_and_approve(relay, admin_client)
    member_client, _ = await auth(relay, member)
    pending_id = new_device_id()
    await request_pairing(relay, pending_id)
    await admin_client.recv_until(is_approval_for(pending_id))
    await member_client.send_json({"type": "pair_decision", "deviceId": pending_id, "userId": str(uuid.uuid4()), "approve": True})
    await member_client.expect_error("invalid_message")
    await member_client.assert_open()
    assert relay.device(pending_id)["status"] == "pending"


async def test_pair_decision_for_unknown_device_is_invalid_message(relay):
    admin, admin_client = await setup_admin(relay)
    await admin_client.send_json({"type": "pair_decision", "deviceId": new_device_id(), "userId": str(uuid.uuid4()), "approve": True})
    await admin_client.expect_error("invalid_message")
    await admin_client.assert_open()


@pytest.mark.parametrize("user_id", ["missing", "", "not-a-uuid", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", None])
async def test_pair_decision_with_bad_user_id_is_invalid_and_request_stays_pending(relay, user_id):
    admin, admin_client = await setup_admin(relay)
    device_id = new_device_id()
    requester = await request_pairing(relay, device_id)
    await admin_client.recv_until(is_approval_for(device_id))
    decision = {"type": "pair_decision", "deviceId": device_id, "approve": True}
    if user_id != "missing":
        decision["userId"] = user_id
    await admin_client.send_json(decision)
    await admin_client.expect_error("invalid_message")
    # the request is still pending and a correct decision still works
    good = str(uuid.uuid4())
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "userId": good, "approve": True})
    result = await requester.expect("pair_result")
    assert_pair_success(result, device_id)
    assert result["userId"] == good


async def test_second_decision_for_same_request_is_invalid_message(relay):
    admin, admin_client = await setup_admin(relay)
    device_id = new_device_id()
    requester = await request_pairing(relay, device_id)
    await admin_client.recv_until(is_approval_for(device_id))
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "userId": str(uuid.uuid4()), "approve": True})
    assert_pair_success(await requester.expect("pair_result"), device_id)
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "approve": False})
    await admin_client.expect_error("invalid_message")
    await admin_client.assert_open()
    assert relay.device(device_id)["status"] == "approved"


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


async def test_user_id_is_uuid4_and_in_token_sub(relay):
    admin = await pair_first_admin(relay)
    assert UUID4_RE.match(admin.user_id)
    assert jwt_parts(admin.token)[1]["sub"] == admin.user_id


async def test_first_admin_is_the_first_request_not_the_first_connection(relay):
    early, late = await Client.connect(relay, "early"), await Client.connect(relay, "late")
    early_id, late_id = new_device_id(), new_device_id()
    await late.send_json(pair_request(late_id, "Late"))
    assert_pair_success(await late.expect("pair_result"), late_id)
    await early.send_json(pair_request(early_id, "Early"))
    await async_wait_for(lambda: (relay.device(early_id) or {}).get("status") == "pending", what="early device pending")
    assert relay.device(late_id)["isAdmin"] is True
