"""Chat: ack, user echo to every device, streaming, idempotency, validation, limits, queue, typing, errors."""

import asyncio
import time

import pytest

from conftest import (
    Client,
    auth,
    is_assistant_final,
    is_user_echo,
    message_frame,
    new_client_id,
    pair_and_approve,
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


async def test_server_ids_are_unique_across_messages(relay):
    _, client = await setup_admin(relay)
    ids = []
    for text in ["one", "two", "three"]:
        ex = await send_and_complete(client, text)
        ids += [ex.echo["id"], ex.final["id"]]
    assert len(set(ids)) == len(ids), ids


async def test_echo_and_assistant_output_reach_every_device_of_the_user_only(relay):
    admin, admin_client = await setup_admin(relay)
    sibling = await pair_and_approve(relay, admin_client, user_id=admin.user_id, name="Sibling")
    stranger = await pair_and_approve(relay, admin_client, name="Stranger")
    sib_client, _ = await auth(relay, sibling)
    str_client, _ = await auth(relay, stranger)

    ex = await send_and_complete(sib_client, "from the sibling")
    assert ex.echo["deviceId"] == sibling.device_id

    echo_on_admin, _ = await admin_client.recv_until(is_user_echo("from the sibling"))
    assert echo_on_admin["id"] == ex.echo["id"] and echo_on_admin["deviceId"] == sibling.device_id, echo_on_admin
    final_on_admin, skipped = await admin_client.recv_until(is_assistant_final("echo: from the sibling"))
    assert final_on_admin["id"] == ex.final["id"], final_on_admin
    assert not any(f.get("type") == "ack" for f in skipped), f"acks go to the sender only: {skipped}"

    # the other account sees nothing of it: its own exchange arrives with no foreign frames before it
    own = await send_and_complete(str_client, "stranger text")
    assert not any("sibling" in str(f.get("content", "")) for f in own.frames), own.frames


async def test_idempotent_retry_acks_again_without_second_echo(relay):
    _, client = await setup_admin(relay)
    cid = new_client_id()
    first = await send_and_complete(client, "retry me", cid)
    await client.send_json(message_frame("retry me", cid))
    ack, skipped = await client.recv_until(lambda f: f.get("type") == "ack")
    assert ack == {"type": "ack", "id": cid}, ack
    # any duplicate echo or regeneration would show up before the next message's frames
    nxt = await send_and_complete(client, "next one")
    dupes = [f for f in skipped + nxt.frames if f.get("content") in ("retry me", "echo: retry me")]
    assert dupes == [], f"retry must not echo or regenerate: {dupes}"
    assert first.echo["id"] != nxt.echo["id"]


async def test_retry_while_streaming_does_not_start_a_second_generation(relay_factory):
    relay = relay_factory(echo={"delay_ms": 200})
    _, client = await setup_admin(relay)
    cid = new_client_id()
    await client.send_json(message_frame("slow", cid))
    first, before = await client.recv_until(lambda f: f.get("type") == "message" and f.get("role") == "assistant")
    await client.send_json(message_frame("slow", cid))
    final, after = await client.recv_until(is_assistant_final("echo: slow"), timeout=15)
    frames = before + [first] + after
    acks = [f for f in frames if f.get("type") == "ack"]
    assert acks == [{"type": "ack", "id": cid}] * 2, frames
    nxt = await send_and_complete(client, "after", timeout=15)
    all_frames = frames + nxt.frames
    assert len([f for f in all_frames if is_user_echo("slow")(f)]) == 1, all_frames
    assert len([f for f in all_frames if is_assistant_final("echo: slow")(f)]) == 0, "second final after retry"
    assert {f["id"] for f in assistant_updates(all_frames) if "slow" in f["content"]} == {final["id"]}


async def test_same_id_with_different_content_is_invalid_message(relay):
    _, client = await setup_admin(relay)
    cid = new_client_id()
    await send_and_complete(client, "original", cid)
    await client.send_json(message_frame("changed", cid))
    error, skipped = await client.recv_until(lambda f: f.get("type") in ("error", "ack"))
    assert error.get("type") == "error" and error.get("code") == "invalid_message", error
    await client.assert_open()
    nxt = await send_and_complete(client, "third")
    assert not any(f.get("content") in ("changed", "echo: changed") for f in skipped + nxt.frames)


async def test_client_ids_are_scoped_per_device(relay):
    admin, admin_client = await setup_admin(relay)
    sibling = await pair_and_approve(relay, admin_client, user_id=admin.user_id)
    sib_client, _ = await auth(relay, sibling)
    cid = "c_shared-id"
    a = await send_and_complete(admin_client, "from admin", cid)
    b = await send_and_complete(sib_client, "from sibling", cid)
    assert a.echo["id"] != b.echo["id"]


@pytest.mark.parametrize("msg_id", ["s_123", "x_123", "123", "", None, 42, "missing"])
async def test_invalid_client_ids_are_rejected(relay, msg_id):
    _, client = await setup_admin(relay)
    frame = {"type": "message", "id": msg_id, "content": "hi"}
    if msg_id == "missing":
        del frame["id"]
    await client.send_json(frame)
    await client.expect_error("invalid_message")
    await client.assert_open()


@pytest.mark.parametrize("content", ["", None, 42, "missing"])
async def test_invalid_content_is_rejected(relay, content):
    _, client = await setup_admin(relay)
    frame = {"type": "message", "id": new_client_id(), "content": content}
    if content == "missing":
        del frame["content"]
    await client.send_json(frame)
    await client.expect_error("invalid_message")
    await client.assert_open()


async def test_content_limit_is_64k_utf8_bytes(relay):
    _, client = await setup_admin(relay)
    cases = [
        ("a" * 65536, "ack"),
        ("é" * 32768, "ack"),  # 65536 bytes, 32768 characters
        ("a" * 65537, "payload_too_large"),
        ("é" * 32768 + "a", "payload_too_large"),  # 65537 bytes, only 32769 characters
    ]
    for content, expected in cases:
        frame = message_frame(content)
        await client.send_json(frame)
        got, _ = await client.recv_until(
            lambda f: (f.get("type") == "ack" and f.get("id") == frame["id"]) or f.get("type") == "error", timeout=15)
        if expected == "ack":
            assert got["type"] == "ack", f"{len(content.encode())} bytes should be accepted: {got}"
        else:
            assert got.get("type") == "error" and got.get("code") == "payload_too_large", got
    await client.assert_open()


async def test_queue_is_capped_and_overflow_is_rate_limited(relay_factory):
    relay = relay_factory(clawline={"messages_per_second": 1000, "max_queued_messages": 20}, echo={"delay_ms": 1000})
    _, client = await setup_admin(relay)
    active = message_frame("active")
    await client.send_json(active)
    await client.recv_until(lambda f: f.get("type") == "typing" and f.get("active") is True)  # now generating
    frames = [message_frame(f"queued {i}") for i in range(21)]
    for frame in frames:
        await client.send_json(frame)
    acks, errors = set(), []
    deadline = time.monotonic() + 10
    while len(acks) + len(errors) < 21 and time.monotonic() < deadline:
        f = await client.recv_json(timeout=deadline - time.monotonic())
        if f.get("type") == "ack" and f["id"] != active["id"]:
            acks.add(f["id"])
        elif f.get("type") == "error":
            errors.append(f)
    assert acks == {f["id"] for f in frames[:20]}, f"the first 20 queued messages are acked: {len(acks)}, errors={errors}"
    assert len(errors) == 1 and errors[0]["code"] == "rate_limited", errors
    assert errors[0].get("messageId", frames[20]["id"]) == frames[20]["id"], errors
    await client.assert_open()


async def test_from_idle_the_active_turn_and_twenty_queued_ones_are_acked(relay_factory):
    relay = relay_factory(clawline={"messages_per_second": 1000, "max_queued_messages": 20}, echo={"delay_ms": 1000})
    _, client = await setup_admin(relay)
    frames = [message_frame(f"burst {i}") for i in range(22)]
    for frame in frames:
        await client.send_json(frame)
    acks, errors = set(), []
    deadline = time.monotonic() + 10
    while len(acks) + len(errors) < 22 and time.monotonic() < deadline:
        f = await client.recv_json(timeout=deadline - time.monotonic())
        if f.get("type") == "ack":
            acks.add(f["id"])
        elif f.get("type") == "error":
            errors.append(f)
    assert len(acks) == 21, f"one active and 20 queued behind it: {len(acks)} acks, errors={errors}"
    assert [e["code"] for e in errors] == ["rate_limited"], errors


async def test_invalid_utf8_in_a_text_frame_closes_1007(relay):
    from conftest import RawWebSocket
    raw = await RawWebSocket.connect(relay, answer_pings=True)
    await raw.send_frame(RawWebSocket.OP_TEXT, b'{"type":"auth","token":"\xff\xfe"}')
    await raw.wait_closed(5)
    assert raw.close_code == 1007, raw.close_code


async def test_queue_is_fifo_with_one_stream_at_a_time(relay_factory):
    relay = relay_factory(clawline={"messages_per_second": 100}, echo={"delay_ms": 30})
    _, client = await setup_admin(relay)
    texts = [f"m{i}" for i in range(4)]
    for text in texts:
        await client.send_json(message_frame(text))
    _, frames = await client.recv_until(is_assistant_final("echo: m3"), timeout=20)
    finals = [f["content"] for f in frames if is_assistant_final()(f)]
    assert finals == ["echo: m0", "echo: m1", "echo: m2"], finals
    stream_order = [f["id"] for f in frames if f.get("type") == "message" and f.get("role") == "assistant"]
    runs = [i for i in range(1, len(stream_order)) if stream_order[i] != stream_order[i - 1]]
    assert len(runs) == 3, f"streams must not interleave: {stream_order}"
    echoes = [f["content"] for f in frames if is_user_echo()(f)]
    assert echoes == texts, echoes


async def test_message_rate_limit_is_5_per_second_and_keeps_socket_open(relay):
    _, client = await setup_admin(relay)
    frames = [message_frame(f"burst {i}") for i in range(7)]
    started = time.monotonic()
    for frame in frames:
        await client.send_json(frame)
    assert time.monotonic() - started < 0.5
    acks, errors = [], []
    while len(acks) + len(errors) < 7:
        f = await client.recv_json(timeout=5)
        if f.get("type") == "ack":
            acks.append(f["id"])
        elif f.get("type") == "error":
            errors.append(f)
    assert acks == [f["id"] for f in frames[:5]], acks
    assert [e["code"] for e in errors] == ["rate_limited", "rate_limited"], errors
    for error, frame in zip(errors, frames[5:]):
        assert error.get("messageId", frame["id"]) == frame["id"], error
    await asyncio.sleep(1.1)  # the 1 s window must pass before the next message is allowed
    await send_and_complete(client, "after the window", timeout=15)


async def test_typing_is_accepted_silently(relay):
    _, client = await setup_admin(relay)
    await client.send_json({"type": "typing", "active": True})
    await client.send_json({"type": "typing", "active": False})
    await client.assert_open()  # the probe's error is the first error frame


@pytest.mark.parametrize("frame", [
    {"type": "typing", "active": True, "role": "assistant"},
    {"type": "typing", "active": True, "role": "user"},
    {"type": "typing"},
    {"type": "typing", "active": "yes"},
])
async def test_invalid_typing_is_invalid_message(relay, frame):
    _, client = await setup_admin(relay)
    await client.send_json(frame)
    await client.expect_error("invalid_message")
    await client.assert_open()


async def test_typing_rate_limit_is_2_per_second(relay):
    _, client = await setup_admin(relay)
    for active in (True, False, True):
        await client.send_json({"type": "typing", "active": active})
    await client.expect_error("rate_limited")
    await client.assert_open()


async def test_user_typing_is_not_relayed_to_other_devices(relay):
    admin, admin_client = await setup_admin(relay)
    sibling = await pair_and_approve(relay, admin_client, user_id=admin.user_id)
    sib_client, _ = await auth(relay, sibling)
    await sib_client.send_json({"type": "typing", "active": True})
    ex = await send_and_complete(sib_client, "hi")
    _, skipped = await admin_client.recv_until(is_assistant_final("echo: hi"))
    assert all(f.get("role") == "assistant" for f in skipped if f.get("type") == "typing"), skipped
    assert ex.final


@pytest.mark.parametrize("frame", [
    {"type": "no_such_type"},
    {"type": "cancel", "id": "c_1"},
    {"id": "c_1", "content": "no type"},
    {"type": 7},
    [1, 2, 3],
])
async def test_unknown_or_missing_type_is_invalid_message_and_open(relay, frame):
    _, client = await setup_admin(relay)
    await client.send_json(frame)
    await client.expect_error("invalid_message")
    await client.assert_open()


@pytest.mark.parametrize("authenticated", [False, True])
@pytest.mark.parametrize("text", ["{not json", '{"type": "message", "id": "c_1"', "\u00ff\u00fe"])
async def test_malformed_json_closes_1002_without_error(relay, authenticated, text):
    if authenticated:
        _, client = await setup_admin(relay)
    else:
        client = await Client.connect(relay)
    await client.send_text(text)
    frames = await client.expect_close(1002)
    assert not any(f.get("type") == "error" for f in frames), frames


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


async def test_inactive_stream_fails_and_its_id_cannot_be_retried(relay_factory):
    relay = relay_factory(clawline={"stream_inactivity_seconds": 1}, echo={"delay_ms": 3000})
    _, client = await setup_admin(relay)
    frame = message_frame("stalled")
    await client.send_json(frame)
    await client.recv_until(lambda f: f.get("type") == "ack")
    deadline = time.monotonic() + 6
    outcome = None
    while time.monotonic() < deadline:
        await asyncio.sleep(0.4)  # paces retries under the 5/s limit while the inactivity window runs
        await client.send_json(frame)
        reply, _ = await client.recv_until(lambda f: f.get("type") in ("ack", "error"))
        if reply["type"] == "error" and reply.get("code") == "server_error" and reply.get("messageId") == frame["id"]:
            # the relay may report the inactive stream; the retry's own answer follows
            reply, _ = await client.recv_until(lambda f: f.get("type") in ("ack", "error"))
        if reply["type"] == "error":
            outcome = reply
            break
    assert outcome is not None and outcome["code"] == "invalid_message", \
        f"retrying an inactive stream's id must be invalid_message, got {outcome}"
    assert not any(is_assistant_final("echo: stalled")(f) for f in client.received), client.received
    await client.assert_open()


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


async def test_typing_true_resets_the_timer_and_false_clears_at_once(relay_factory):
    relay = relay_factory(clawline={"typing_timeout_seconds": 1})
    _, client = await setup_admin(relay)
    await client.send_json({"type": "typing", "active": True})
    await wait_typing(relay, 1, timeout=2)
    await asyncio.sleep(0.7)  # part of the 1 s timeout elapses, then typing is refreshed
    refreshed = time.monotonic()
    await client.send_json({"type": "typing", "active": True})
    cleared = await wait_typing(relay, 0, timeout=4)
    assert cleared - refreshed >= 0.8, f"cleared {cleared - refreshed:.2f}s after the refresh: timer not reset"

    await asyncio.sleep(1.0)  # the 2/s typing window passes
    await client.send_json({"type": "typing", "active": True})
    await wait_typing(relay, 1, timeout=2)
    stopped = time.monotonic()
    await client.send_json({"type": "typing", "active": False})
    cleared = await wait_typing(relay, 0, timeout=2)
    assert cleared - stopped < 0.6, f"typing:false took {cleared - stopped:.2f}s to clear"
