"""Message attachments end to end: assets uploaded over HTTP, referenced by the uploader and refused
to another user.

The inline image limits and validation, counts, base64 leniency and retries are tested in memory:
`Tests/ClawlineBridgeTests/ClawlineAttachmentTests.swift`.
"""

from conftest import (
    PNG_1PX,
    is_user_echo,
    message_frame,
    pair_and_approve,
    setup_admin,
    upload,
)

async def outcome(client, frame):
    """Send a message; return its ack or the first error."""
    await client.send_json(frame)
    reply, _ = await client.recv_until(
        lambda f: (f.get("type") == "ack" and f.get("id") == frame["id"]) or f.get("type") == "error", timeout=15)
    return reply


async def expect_accepted(client, frame):
    reply = await outcome(client, frame)
    assert reply.get("type") == "ack", f"expected ack, got {reply}"


async def expect_rejected(client, frame, code):
    codes = {code} if isinstance(code, str) else set(code)
    reply = await outcome(client, frame)
    assert reply.get("type") == "error" and reply.get("code") in codes, f"expected {sorted(codes)}, got {reply}"
    await client.assert_open()


async def test_asset_reference_is_accepted_and_echoed(relay):
    admin, client = await setup_admin(relay)
    asset = upload(relay, admin.token, PNG_1PX, "image/png").json()["assetId"]
    frame = message_frame("see asset", attachments=[{"type": "asset", "assetId": asset}])
    await expect_accepted(client, frame)
    echo, _ = await client.recv_until(is_user_echo("see asset"))
    assert echo.get("attachments") == [{"id": f"{echo['id']}-0", "type": "asset", "assetId": asset}], echo


async def test_other_users_asset_reference_is_rejected(relay):
    admin, admin_client = await setup_admin(relay)
    stranger = await pair_and_approve(relay, admin_client)
    foreign = upload(relay, stranger.token, PNG_1PX).json()["assetId"]
    frame = message_frame("not mine", attachments=[{"type": "asset", "assetId": foreign}])
    await expect_rejected(admin_client, frame, {"asset_not_found", "invalid_message"})
