"""What today's Clawline iOS app needs beyond the v1 guide (clickety-clacks/clawline 09beb34).

Every frame read here also passes `clawline_app_schema` (the app's Codable models), as in every
Clawline test; these tests add the behaviours the app's models and view model rely on:
attachment ids, `user_info`, and the admin channel.
"""

from __future__ import annotations

import base64

from conftest import (
    PNG_1PX,
    Client,
    auth,
    auth_frame,
    expect_user_info,
    image_attachment,
    is_assistant_final,
    is_user_echo,
    make_config,
    message_frame,
    new_client_id,
    pair_and_approve,
    send_and_complete,
    setup_admin,
    upload,
)


def admin_message(content: str, attachments=None) -> dict:
    frame = message_frame(content)
    frame["channelType"] = "admin"
    if attachments is not None:
        frame["attachments"] = attachments
    return frame


def admin_relay(relay_factory):
    """A relay whose admin channel is answered by its own backend, so the answers tell which."""
    cfg = make_config()
    cfg["backends"].append({"name": "ops", "kind": "command", "command": ["/bin/sh", "-c", "printf 'ops: '; cat"], "timeout_seconds": 30})
    cfg["clawline"]["admin_backend"] = "ops"
    return relay_factory(cfg)


async def test_every_attachment_kind_has_a_stable_id_and_decodes_in_the_app(relay):
    admin, client = await setup_admin(relay)
    resp = upload(relay, admin.token, PNG_1PX)
    assert resp.status == 200, resp.body
    asset_id = resp.json()["assetId"]
    unpadded = base64.b64encode(PNG_1PX).decode().rstrip("=")
    spaced = " ".join(unpadded[i:i + 16] for i in range(0, len(unpadded), 16))
    attachments = [{"type": "image", "mimeType": "image/png", "data": spaced}, {"type": "asset", "assetId": asset_id}]
    # Both reach the backend, the upload looked up by its id (echo names each).
    ex = await send_and_complete(client, "two kinds", attachments=attachments,
                                 answer="echo: two kinds\n[attached: unnamed, image/png]\n[attached: unnamed, image/png]")
    echoed = ex.echo["attachments"]
    ids = [a["id"] for a in echoed]
    assert len(set(ids)) == 2, echoed
    assert [a["type"] for a in echoed] == ["image", "asset"], echoed
    # Stored as strict base64, which is all Foundation's Data decoder takes.
    assert echoed[0]["data"] == base64.b64encode(PNG_1PX).decode() and echoed[0]["mimeType"] == "image/png", echoed
    assert echoed[1]["assetId"] == asset_id, echoed
    await client.close()

    again, result = await auth(relay, admin)
    assert result["replayCount"] == 2, result
    replayed = [f for f in [await again.recv_json() for _ in range(2)] if f.get("role") == "user"]
    assert [a["id"] for a in replayed[0]["attachments"]] == ids, replayed


async def test_url_attachments_are_refused_as_the_app_cannot_show_them(relay):
    _, client = await setup_admin(relay)
    frame = message_frame("link", attachments=[{"type": "url", "url": "https://example.invalid/x"}])
    await client.send_json(frame)
    error = await client.expect_error("invalid_message")
    assert error["messageId"] == frame["id"] and "asset" in error["message"], error
    await client.assert_open()


async def test_user_info_follows_auth_result_and_names_the_admin(relay):
    admin, admin_client = await setup_admin(relay)
    member = await pair_and_approve(relay, admin_client)
    member_client = await Client.connect(relay, "member")
    await member_client.send_json(auth_frame(member))
    await member_client.expect("auth_result", success=True)
    info = await expect_user_info(member_client, member)
    assert info["isAdmin"] is False, info


async def test_the_admin_channel_is_shared_by_admin_devices_and_answered_by_its_backend(relay_factory):
    relay = admin_relay(relay_factory)
    admin, admin_client = await setup_admin(relay)
    # A second user's device, made an admin from the CLI while it is connected.
    other = await pair_and_approve(relay, admin_client, name="Other")
    other_client, _ = await auth(relay, other)
    relay.cli("devices", "admin", other.device_id)
    info = await other_client.expect("user_info", userId=other.user_id)
    assert info["isAdmin"] is True, info

    frame = admin_message("status?")
    await admin_client.send_json(frame)
    final, frames = await admin_client.recv_until(is_assistant_final("ops: status?"), timeout=10)
    assert any(f.get("type") == "ack" and f.get("id") == frame["id"] for f in frames), frames
    for f in frames + [final]:
        if f.get("type") in ("message", "typing"):
            assert f["channelType"] == "admin", f
    echo = next(f for f in frames if is_user_echo("status?")(f))
    assert echo["deviceId"] == admin.device_id, echo
    # The other admin sees the same conversation, live, on its admin channel.
    seen, _ = await other_client.recv_until(is_assistant_final("ops: status?"), timeout=10)
    assert seen["id"] == final["id"] and seen["channelType"] == "admin", seen

    # Personal messages still go to the default backend and stay personal.
    ex = await send_and_complete(admin_client, "mine")
    assert ex.final["channelType"] == "personal" and ex.echo["channelType"] == "personal", ex.frames


async def test_a_non_admin_cannot_write_to_or_hear_the_admin_channel(relay_factory):
    relay = admin_relay(relay_factory)
    admin, admin_client = await setup_admin(relay)
    member = await pair_and_approve(relay, admin_client)
    member_client, _ = await auth(relay, member)
    frame = admin_message("let me in")
    await member_client.send_json(frame)
    error = await member_client.expect_error("invalid_message")
    assert error["messageId"] == frame["id"], error
    await member_client.assert_open()

    await admin_client.send_json(admin_message("admins only"))
    await admin_client.recv_until(is_assistant_final("ops: admins only"), timeout=10)
    # The member's own exchange arrives with nothing of the admin channel before it.
    ex = await send_and_complete(member_client, "just me")
    assert all(f.get("channelType", "personal") == "personal" for f in ex.frames), ex.frames

    bad = message_frame("which?")
    bad["channelType"] = "team"
    await member_client.send_json(bad)
    error = await member_client.expect_error("invalid_message", skip=lambda f: f.get("type") == "typing")
    assert error["messageId"] == bad["id"], error


async def test_replay_gives_admins_both_channels_in_order_and_members_their_own(relay_factory):
    relay = admin_relay(relay_factory)
    admin, admin_client = await setup_admin(relay)
    member = await pair_and_approve(relay, admin_client, user_id=admin.user_id, name="Sibling")
    await send_and_complete(admin_client, "p1")
    await admin_client.send_json(admin_message("a1"))
    await admin_client.recv_until(is_assistant_final("ops: a1"), timeout=10)
    await send_and_complete(admin_client, "p2")
    await admin_client.close()

    again, result = await auth(relay, admin)
    frames = [await again.recv_json() for _ in range(result["replayCount"])]
    assert [(f["content"], f["channelType"]) for f in frames] == [
        ("p1", "personal"), ("echo: p1", "personal"), ("a1", "admin"), ("ops: a1", "admin"), ("p2", "personal"), ("echo: p2", "personal")
    ], frames
    # A cursor in the admin channel resumes both channels from that point.
    await again.close()
    after_admin, result = await auth(relay, admin, last_message_id=frames[2]["id"])
    assert result["historyReset"] is False, result
    tail = [await after_admin.recv_json() for _ in range(result["replayCount"])]
    assert [f["content"] for f in tail] == ["ops: a1", "p2", "echo: p2"], tail

    # The same user's non-admin device replays the personal channel only.
    sibling, result = await auth(relay, member)
    mine = [await sibling.recv_json() for _ in range(result["replayCount"])]
    assert [f["content"] for f in mine] == ["p1", "echo: p1", "p2", "echo: p2"], mine


async def test_admins_download_assets_sent_to_the_admin_channel(relay_factory):
    relay = admin_relay(relay_factory)
    admin, admin_client = await setup_admin(relay)
    other = await pair_and_approve(relay, admin_client, name="Other")
    member = await pair_and_approve(relay, admin_client, name="Member")
    relay.cli("devices", "admin", other.device_id)
    asset_id = upload(relay, admin.token, PNG_1PX).json()["assetId"]
    before = relay.http("GET", f"/download/{asset_id}", headers=other.bearer)
    assert before.status == 404, before.body

    frame = admin_message("screenshot", attachments=[{"type": "asset", "assetId": asset_id}])
    await admin_client.send_json(frame)
    await admin_client.recv_until(is_assistant_final("ops: screenshot"), timeout=10)
    shared = relay.http("GET", f"/download/{asset_id}", headers=other.bearer)
    assert shared.status == 200 and shared.body == PNG_1PX, shared.status
    assert relay.http("GET", f"/download/{asset_id}", headers=member.bearer).status == 404


async def test_admin_removed_from_the_cli_leaves_the_channel_at_once(relay_factory):
    relay = admin_relay(relay_factory)
    admin, admin_client = await setup_admin(relay)
    other = await pair_and_approve(relay, admin_client, name="Other")
    relay.cli("devices", "admin", other.device_id)
    other_client, result = await auth(relay, other)
    assert result["isAdmin"] is True, result
    relay.cli("devices", "admin", other.device_id, "--remove")
    info = await other_client.expect("user_info", userId=other.user_id)
    assert info["isAdmin"] is False, info
    frame = admin_message("still here?")
    await other_client.send_json(frame)
    assert (await other_client.expect_error("invalid_message"))["messageId"] == frame["id"]
    assert relay.cli("devices", "admin", "0e2d3c9a-1111-4222-8333-444455556666", check=False).returncode != 0
