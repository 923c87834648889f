"""Authentication: success fields, token validation, revocation, protocolVersion, limits, pre-auth frames."""

import asyncio
import json
import time

import pytest

from conftest import (
    Client,
    Device,
    async_wait_for,
    auth,
    auth_frame,
    b64url,
    jwt_parts,
    new_device_id,
    pair_and_approve,
    pair_first_admin,
    setup_admin,
    upload,
    assert_http_error,
)


async def expect_auth_failure(relay, frame, reason):
    client = await Client.connect(relay, "auth-fail")
    await client.send_json(frame)
    result = await client.expect("auth_result")
    assert result.get("success") is False and result.get("reason") == reason, result
    assert "sessionId" not in result and "token" not in result, result
    await client.expect_close(1008)


async def test_auth_success_fields(relay):
    admin = await pair_first_admin(relay)
    client, result = await auth(relay, admin)
    assert result["userId"] == admin.user_id, result
    assert isinstance(result.get("sessionId"), str) and result["sessionId"], result
    assert result.get("replayCount") == 0, result
    assert result.get("replayTruncated") is False, result
    assert isinstance(result.get("historyReset"), bool), result
    await client.assert_open()


async def test_each_connection_gets_its_own_session_id(relay):
    admin = await pair_first_admin(relay)
    first, r1 = await auth(relay, admin)
    await first.close()
    second, r2 = await auth(relay, admin)
    assert r1["sessionId"] != r2["sessionId"]


async def test_auth_with_null_or_omitted_last_message_id(relay):
    admin = await pair_first_admin(relay)
    c1, r1 = await auth(relay, admin, last_message_id=None)
    await c1.close()
    c2, r2 = await auth(relay, admin)
    assert r1["replayCount"] == r2["replayCount"] == 0


async def test_auth_sets_last_seen_at(relay):
    admin = await pair_first_admin(relay)
    assert relay.device(admin.device_id)["lastSeenAt"] is None
    before = int(time.time() * 1000) - 2000
    client, _ = await auth(relay, admin)
    entry = await async_wait_for(lambda: relay.device(admin.device_id)["lastSeenAt"] and relay.device(admin.device_id),
                                 what="lastSeenAt after auth")
    assert isinstance(entry["lastSeenAt"], int) and entry["lastSeenAt"] >= before, entry
    assert entry["lastSeenAt"] >= entry["createdAt"], entry


def tampered_tokens(token: str) -> dict[str, str]:
    head, payload, sig = token.split(".")
    header, claims, _ = jwt_parts(token)
    bad_sig = ("A" if sig[0] != "A" else "B") + sig[1:]
    other_sub = dict(claims, sub="00000000-0000-4000-8000-000000000000")
    no_device = {k: v for k, v in claims.items() if k != "deviceId"}
    none_header = b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    return {
        "garbage": "garbage",
        "empty": "",
        "three-dots": "a.b.c",
        "bad-signature": f"{head}.{payload}.{bad_sig}",
        "no-signature": f"{head}.{payload}.",
        "changed-sub": f"{head}.{b64url(json.dumps(other_sub).encode())}.{sig}",
        "no-deviceId-claim": f"{head}.{b64url(json.dumps(no_device).encode())}.{sig}",
        "alg-none": f"{none_header}.{payload}.",
    }


@pytest.mark.parametrize("kind", ["garbage", "empty", "three-dots", "bad-signature", "no-signature",
                                  "changed-sub", "no-deviceId-claim", "alg-none"])
async def test_bad_tokens_fail_with_auth_failed_and_close(relay, kind):
    admin = await pair_first_admin(relay)
    token = tampered_tokens(admin.token)[kind]
    await expect_auth_failure(relay, auth_frame(Device(admin.device_id, token, admin.user_id)), "auth_failed")


async def test_token_presented_with_another_device_id_fails(relay):
    admin, admin_client = await setup_admin(relay)
    other = await pair_and_approve(relay, admin_client, user_id=admin.user_id)
    for device_id in [other.device_id, new_device_id()]:
        await expect_auth_failure(relay, auth_frame(Device(device_id, admin.token, admin.user_id)), "auth_failed")


async def test_expired_token_is_auth_failed_not_revoked(relay_factory):
    relay = relay_factory(clawline={"token_ttl_seconds": 1})
    admin = await pair_first_admin(relay)
    exp = jwt_parts(admin.token)[1]["exp"]
    await asyncio.sleep(max(0.0, exp + 1.1 - time.time()))  # real time must pass the exp claim
    await expect_auth_failure(relay, auth_frame(admin), "auth_failed")
    assert_http_error(upload(relay, admin.token, b"x"), 401, "auth_failed")


async def test_revoked_device_gets_token_revoked_and_close(relay):
    admin, admin_client = await setup_admin(relay)
    member = await pair_and_approve(relay, admin_client)
    relay.cli("devices", "revoke", member.device_id)
    await expect_auth_failure(relay, auth_frame(member), "token_revoked")


@pytest.mark.parametrize("version", ["missing", 2, "1", None, 1.5, 0])
async def test_auth_with_bad_protocol_version_is_rejected_and_closed(relay, version):
    admin = await pair_first_admin(relay)
    frame = auth_frame(admin)
    if version == "missing":
        del frame["protocolVersion"]
    else:
        frame["protocolVersion"] = version
    client = await Client.connect(relay)
    await client.send_json(frame)
    await client.expect_error("invalid_message")
    await client.expect_close(1008)


@pytest.mark.parametrize("field", ["token", "deviceId"])
async def test_auth_missing_required_field_is_invalid_message(relay, field):
    admin = await pair_first_admin(relay)
    frame = auth_frame(admin)
    del frame[field]
    client = await Client.connect(relay)
    await client.send_json(frame)
    await client.expect_error("invalid_message")
    await client.assert_open()


async def test_auth_rate_limit_closes_socket_and_survives_reconnects(relay_factory):
    relay = relay_factory(clawline={"auth_attempts_per_minute": 2})
    admin = await pair_first_admin(relay)
    for _ in range(2):
        client, _ = await auth(relay, admin)
        await client.close()
    client = await Client.connect(relay)
    await client.send_json(auth_frame(admin))
    frames = await client.expect_close(1008)
    assert frames and frames[-1].get("type") == "error" and frames[-1].get("code") == "rate_limited", frames
    assert not any(f.get("type") == "auth_result" and f.get("success") for f in frames), frames


async def test_failed_auth_attempts_count_toward_the_limit(relay_factory):
    relay = relay_factory(clawline={"auth_attempts_per_minute": 2})
    admin = await pair_first_admin(relay)
    bad = Device(admin.device_id, tampered_tokens(admin.token)["bad-signature"], admin.user_id)
    for _ in range(2):
        await expect_auth_failure(relay, auth_frame(bad), "auth_failed")
    client = await Client.connect(relay)
    await client.send_json(auth_frame(admin))
    await client.expect_error("rate_limited")
    await client.expect_close(1008)


@pytest.mark.parametrize("frame", [
    {"type": "message", "id": "c_1", "content": "hello"},
    {"type": "typing", "active": True},
])
async def test_chat_frames_before_auth_fail_and_close(relay, frame):
    await pair_first_admin(relay)
    client = await Client.connect(relay)
    await client.send_json(frame)
    await client.expect_error("auth_failed")
    await client.expect_close(1008)


async def test_failed_auth_does_not_reveal_or_accept_session(relay):
    admin = await pair_first_admin(relay)
    client = await Client.connect(relay)
    await client.send_json(auth_frame(Device(admin.device_id, "garbage", admin.user_id)))
    frames = await client.expect_close(1008)
    assert [f["type"] for f in frames] == ["auth_result"], frames


async def test_token_still_valid_after_restart(relay):
    admin = await pair_first_admin(relay)
    relay.restart()
    client, result = await auth(relay, admin)
    assert result["userId"] == admin.user_id


async def test_auth_result_reports_is_admin(relay):
    admin, admin_client = await setup_admin(relay)
    member = await pair_and_approve(relay, admin_client)
    await admin_client.close()
    _, admin_result = await auth(relay, admin)
    _, member_result = await auth(relay, member)
    assert admin_result.get("isAdmin") is True, admin_result
    assert member_result.get("isAdmin") is False, member_result
