"""Message attachments: inline image limits and validation, asset references."""

import base64
import os
import uuid

import pytest

from conftest import (
    PNG_1PX,
    image_attachment,
    is_user_echo,
    message_frame,
    pair_and_approve,
    setup_admin,
    upload,
)

KB = 1024


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


async def test_inline_image_at_256k_is_accepted_and_echoed(relay):
    _, client = await setup_admin(relay)
    raw = os.urandom(256 * KB)
    frame = message_frame("picture", attachments=[image_attachment(raw, "image/jpeg")])
    await expect_accepted(client, frame)
    echo, _ = await client.recv_until(is_user_echo("picture"), timeout=15)
    atts = echo.get("attachments")
    assert isinstance(atts, list) and len(atts) == 1, echo.get("attachments")
    assert atts[0]["type"] == "image" and atts[0]["mimeType"] == "image/jpeg", atts[0]["mimeType"]
    assert base64.b64decode(atts[0]["data"]) == raw


async def test_inline_image_over_256k_is_payload_too_large(relay):
    _, client = await setup_admin(relay)
    frame = message_frame("too big", attachments=[image_attachment(os.urandom(256 * KB + 1))])
    await expect_rejected(client, frame, "payload_too_large")


async def test_total_inline_bytes_over_256k_is_payload_too_large(relay):
    _, client = await setup_admin(relay)
    frame = message_frame("two halves", attachments=[image_attachment(os.urandom(130 * KB)) for _ in range(2)])
    await expect_rejected(client, frame, "payload_too_large")


async def test_four_attachments_ok_five_too_many(relay):
    _, client = await setup_admin(relay)
    four = message_frame("four", attachments=[image_attachment(PNG_1PX) for _ in range(4)])
    await expect_accepted(client, four)
    five = message_frame("five", attachments=[image_attachment(PNG_1PX) for _ in range(5)])
    await expect_rejected(client, five, "payload_too_large")


async def test_attachment_count_includes_asset_references(relay):
    admin, client = await setup_admin(relay)
    assets = [upload(relay, admin.token, PNG_1PX).json()["assetId"] for _ in range(2)]
    atts = [image_attachment(PNG_1PX) for _ in range(3)] + [{"type": "asset", "assetId": a} for a in assets]
    await expect_rejected(client, message_frame("mixed five", attachments=atts), "payload_too_large")


async def test_full_64k_content_plus_256k_inline_fits_320k(relay):
    _, client = await setup_admin(relay)
    frame = message_frame("x" * (64 * KB), attachments=[image_attachment(os.urandom(256 * KB))])
    await expect_accepted(client, frame)


@pytest.mark.parametrize("mime", ["image/png", "image/jpeg", "image/gif", "image/webp", "image/heic"])
async def test_allowed_mime_types(relay, mime):
    _, client = await setup_admin(relay)
    await expect_accepted(client, message_frame("img", attachments=[image_attachment(PNG_1PX, mime)]))


@pytest.mark.parametrize("mime", ["image/bmp", "text/plain", "application/octet-stream", "", None, "IMAGE"])
async def test_other_mime_types_are_invalid(relay, mime):
    _, client = await setup_admin(relay)
    att = image_attachment(PNG_1PX)
    att["mimeType"] = mime
    await expect_rejected(client, message_frame("img", attachments=[att]), "invalid_message")


@pytest.mark.parametrize("data", ["!!!not base64!!!", "abc$", "", None, 12])
async def test_bad_inline_data_is_invalid(relay, data):
    _, client = await setup_admin(relay)
    att = {"type": "image", "mimeType": "image/png", "data": data}
    await expect_rejected(client, message_frame("img", attachments=[att]), "invalid_message")


async def test_base64_whitespace_and_missing_padding_are_tolerated(relay):
    _, client = await setup_admin(relay)
    encoded = base64.b64encode(b"\x89PNG" + os.urandom(61)).decode()  # 65 bytes -> padded encoding
    assert encoded.endswith("=")
    chunked = "\n".join(encoded[i:i + 16] for i in range(0, len(encoded), 16))
    for data in (encoded.rstrip("="), chunked):
        await expect_accepted(client, message_frame("img", attachments=[{"type": "image", "mimeType": "image/png", "data": data}]))


@pytest.mark.parametrize("attachment", [
    None, "image", 3, [], {"type": "video", "mimeType": "video/mp4", "data": "AAAA"},
    {"mimeType": "image/png", "data": "AAAA"}, {"type": "image", "data": "AAAA"},
    {"type": "asset"}, {"type": "asset", "assetId": ""},
])
async def test_malformed_attachment_entries_are_invalid(relay, attachment):
    _, client = await setup_admin(relay)
    await expect_rejected(client, message_frame("bad", attachments=[attachment]), "invalid_message")


@pytest.mark.parametrize("attachments", ["image", {"type": "image"}, 5])
async def test_attachments_must_be_an_array(relay, attachments):
    _, client = await setup_admin(relay)
    await expect_rejected(client, message_frame("bad", attachments=attachments), "invalid_message")


async def test_asset_reference_is_accepted_and_echoed(relay):
    admin, client = await setup_admin(relay)
    asset = upload(relay, admin.token, PNG_1PX, "image/png").json()["assetId"]
    frame = message_frame("see asset", attachments=[{"type": "asset", "assetId": asset}])
    await expect_accepted(client, frame)
    echo, _ = await client.recv_until(is_user_echo("see asset"))
    assert echo.get("attachments") == [{"id": f"{echo['id']}-0", "type": "asset", "assetId": asset}], echo


async def test_unknown_asset_reference_is_rejected(relay):
    _, client = await setup_admin(relay)
    frame = message_frame("ghost", attachments=[{"type": "asset", "assetId": f"a_{uuid.uuid4()}"}])
    await expect_rejected(client, frame, {"asset_not_found", "invalid_message"})


async def test_other_users_asset_reference_is_rejected(relay):
    admin, admin_client = await setup_admin(relay)
    stranger = await pair_and_approve(relay, admin_client)
    foreign = upload(relay, stranger.token, PNG_1PX).json()["assetId"]
    frame = message_frame("not mine", attachments=[{"type": "asset", "assetId": foreign}])
    await expect_rejected(admin_client, frame, {"asset_not_found", "invalid_message"})


async def test_retry_with_different_attachments_is_invalid(relay):
    _, client = await setup_admin(relay)
    cid = "c_" + uuid.uuid4().hex
    await expect_accepted(client, message_frame("with image", cid, [image_attachment(PNG_1PX)]))
    other = image_attachment(PNG_1PX + b"\x00")
    await expect_rejected(client, message_frame("with image", cid, [other]), "invalid_message")
    await expect_rejected(client, message_frame("with image", cid, []), "invalid_message")


async def test_retry_with_null_or_missing_attachments_matches_empty(relay):
    _, client = await setup_admin(relay)
    cid = "c_" + uuid.uuid4().hex
    await expect_accepted(client, message_frame("plain", cid, []))
    await expect_accepted(client, message_frame("plain", cid))
    await expect_accepted(client, message_frame("plain", cid, None))
