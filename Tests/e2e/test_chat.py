"""Chat end to end: one exchange with the echo backend (ack, echo, streaming, typing), invalid
UTF-8 at the transport, command backends (their output, failure, timeout), the typing gauge in
`/metrics`.

Who sees what, idempotent retries, the message rules and limits, the queue, typing and failed or
silent answers are tested in memory: `Tests/ClawlineBridgeTests/ClawlineChatTests.swift`.
"""

import asyncio
import time

from conftest import (
    is_assistant_final,
    message_frame,
    new_client_id,
    send_and_complete,
    setup_admin,
)


def now_ms() -> int:
    return int(time.time() * 1000)


def assistant_updates(frames, msg_id=None):
    return [f for f in frames if f.get("type") == "message" and f.get("role") == "assistant"
            and f.get("streaming") is True and (msg_id is None or f.get("id") == msg_id)]


async def test_message_is_acked_echoed_and_streamed(relay):
    admin, client = await setup_admin(relay)
    cid = new_client_id()
    ex = await send_and_complete(client, "hello there", cid)
    assert ex.ack == {"type": "ack", "id": cid}, ex.ack

    echo = ex.echo
    assert echo["id"].startswith("s_") and echo["id"] != cid, echo
    assert echo["role"] == "user" and echo["streaming"] is False, echo
    assert echo["deviceId"] == admin.device_id, echo
    assert isinstance(echo["timestamp"], int) and abs(echo["timestamp"] - now_ms()) < 60_000, echo
    assert echo.get("attachments", []) == [], echo

    final = ex.final
    assert final["content"] == "echo: hello there", final
    assert final["id"].startswith("s_") and final["id"] != echo["id"], final
    assert "deviceId" not in final, f"assistant messages carry no deviceId: {final}"
    assert isinstance(final["timestamp"], int) and abs(final["timestamp"] - now_ms()) < 60_000, final

    updates = assistant_updates(ex.frames)
    assert len(updates) >= 2, f"expected at least two streaming updates: {ex.frames}"
    assert {u["id"] for u in updates} == {final["id"]}, ex.frames
    lengths = [len(u["content"]) for u in updates]
    assert lengths == sorted(lengths), f"updates carry the accumulated content: {updates}"
    for update in updates:
        assert final["content"].startswith(update["content"]), f"update is not a prefix of the final: {update}"
        assert "deviceId" not in update and isinstance(update.get("timestamp"), int), update

    # assistant typing: on before the first update, off after the last update (before or after the final)
    typing = [f for f in ex.frames if f.get("type") == "typing"]
    assert typing and typing[0] == {"type": "typing", "role": "assistant", "active": True, "channelType": "personal"}, ex.frames
    assert ex.frames.index(typing[0]) < ex.frames.index(updates[0]), ex.frames
    if len(typing) == 1:
        off, _ = await client.recv_until(lambda f: f.get("type") == "typing")
    else:
        off = typing[1]
        assert ex.frames.index(off) > ex.frames.index(updates[-1]), ex.frames
    assert off == {"type": "typing", "role": "assistant", "active": False, "channelType": "personal"}, off
    assert len(typing) <= 2, ex.frames


async def test_invalid_utf8_in_a_text_frame_closes_1007(relay):
    from conftest import RawWebSocket
    raw = await RawWebSocket.connect(relay, answer_pings=True)
    await raw.send_frame(RawWebSocket.OP_TEXT, b'{"type":"auth","token":"\xff\xfe"}')
    await raw.wait_closed(5)
    assert raw.close_code == 1007, raw.close_code


async def test_command_backend_output_becomes_assistant_text(relay_factory):
    relay = relay_factory(clawline={"backend": "cmd"}, cmd={"command": ["/bin/sh", "-c", "tr a-z A-Z"]})
    _, client = await setup_admin(relay)
    await client.send_json(message_frame("shout this"))
    final, frames = await client.recv_until(is_assistant_final(), timeout=15)
    assert final["content"] == "SHOUT THIS", final
    assert not any(f.get("type") == "error" for f in frames), frames


async def test_backend_failure_is_server_error_with_message_id_and_queue_continues(relay_factory):
    relay = relay_factory(clawline={"backend": "cmd"})  # cat; exit 3
    _, client = await setup_admin(relay)
    first, second = message_frame("will fail"), message_frame("will fail too")
    await client.send_json(first)
    await client.send_json(second)
    err1, frames1 = await client.recv_until(lambda f: f.get("type") == "error", timeout=15)
    assert err1["code"] == "server_error" and err1.get("messageId") == first["id"], err1
    err2, frames2 = await client.recv_until(lambda f: f.get("type") == "error", timeout=15)
    assert err2["code"] == "server_error" and err2.get("messageId") == second["id"], err2
    frames = frames1 + frames2
    assert {f["id"] for f in frames if f.get("type") == "ack"} == {first["id"], second["id"]}, frames
    assert not any(is_assistant_final()(f) for f in frames), f"no final after a failure: {frames}"
    await client.assert_open()
    # a failed message id cannot be restarted
    await client.send_json(first)
    await client.expect_error("invalid_message", skip=lambda f: f.get("type") != "error")


async def test_backend_timeout_is_server_error(relay_factory):
    relay = relay_factory(clawline={"backend": "cmd"},
                          cmd={"command": ["/bin/sh", "-c", "sleep 20"], "timeout_seconds": 1})
    _, client = await setup_admin(relay)
    frame = message_frame("never answered")
    await client.send_json(frame)
    started = time.monotonic()
    err, frames = await client.recv_until(lambda f: f.get("type") == "error", timeout=8)
    assert err["code"] == "server_error" and err.get("messageId") == frame["id"], err
    assert time.monotonic() - started < 6
    assert not any(is_assistant_final()(f) for f in frames), frames


def typing_devices(relay) -> float:
    """The relay's `clawrelay_typing_devices` gauge (devices whose user is currently typing)."""
    text = relay.http("GET", "/metrics", admin=True).body.decode()
    for line in text.splitlines():
        if line.startswith("clawrelay_typing_devices"):
            return float(line.rsplit(" ", 1)[-1])
    raise AssertionError(f"clawrelay_typing_devices missing from /metrics:\n{text[:1500]}")


async def wait_typing(relay, value, timeout):
    deadline = time.monotonic() + timeout
    while (current := await asyncio.to_thread(typing_devices, relay)) != value:
        assert time.monotonic() < deadline, f"typing gauge stayed {current}, expected {value}"
        await asyncio.sleep(0.05)
    return time.monotonic()


async def test_typing_auto_clears_after_the_timeout(relay_factory):
    relay = relay_factory(clawline={"typing_timeout_seconds": 1})
    _, client = await setup_admin(relay)
    sent = time.monotonic()
    await client.send_json({"type": "typing", "active": True})
    await wait_typing(relay, 1, timeout=2)
    cleared = await wait_typing(relay, 0, timeout=4)
    assert 0.8 <= cleared - sent <= 3.0, f"cleared {cleared - sent:.2f}s after typing started (timeout 1 s)"
