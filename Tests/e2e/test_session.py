"""Session takeover: session_replaced, stream handoff, queue survival, failed takeover."""

from conftest import (
    Client,
    Device,
    auth,
    auth_frame,
    is_assistant_final,
    message_frame,
    pair_and_approve,
    send_and_complete,
    setup_admin,
)


def is_stream_update(f):
    return f.get("type") == "message" and f.get("role") == "assistant" and f.get("streaming") is True


async def test_new_socket_replaces_old_with_session_replaced_1000(relay):
    admin, old = await setup_admin(relay)
    new, result = await auth(relay, admin, name="new")
    frames = await old.expect_close(1000)
    errors = [f for f in frames if f.get("type") == "error"]
    assert errors and errors[-1]["code"] == "session_replaced" and frames[-1] is errors[-1], frames
    assert isinstance(errors[-1].get("message"), str)
    await send_and_complete(new, "still works")


async def test_takeover_moves_the_active_stream_to_the_new_socket(relay_factory):
    relay = relay_factory(echo={"delay_ms": 300})
    admin, old = await setup_admin(relay)
    frame = message_frame("hand me over")
    await old.send_json(frame)
    echo, _ = await old.recv_until(lambda f: f.get("type") == "message" and f.get("role") == "user")
    first, _ = await old.recv_until(is_stream_update)

    new, result = await auth(relay, admin, last_message_id=echo["id"], name="new")
    assert result["replayCount"] == 0, result
    old_frames = await old.expect_close(1000)
    assert any(f.get("type") == "error" and f.get("code") == "session_replaced" for f in old_frames), old_frames
    assert not any(is_assistant_final()(f) for f in old_frames), f"old socket must not finish the stream: {old_frames}"

    snapshot, before = await new.recv_until(lambda f: f.get("type") == "message")
    assert all(f.get("type") == "typing" for f in before), before
    assert is_stream_update(snapshot) and snapshot["id"] == first["id"], f"expected a snapshot of {first['id']}: {snapshot}"
    assert snapshot["content"].startswith(first["content"]) and snapshot["content"], snapshot
    final, between = await new.recv_until(is_assistant_final(), timeout=15)
    assert final["id"] == first["id"] and final["content"] == "echo: hand me over", final
    for update in [f for f in between if f.get("type") == "message"]:
        assert update["id"] == first["id"] and final["content"].startswith(update["content"]), between


async def test_queue_survives_takeover(relay_factory):
    relay = relay_factory(echo={"delay_ms": 300})
    admin, old = await setup_admin(relay)
    await old.send_json(message_frame("first"))
    second = message_frame("second")
    await old.send_json(second)
    await old.recv_until(lambda f: f.get("type") == "ack" and f.get("id") == second["id"])
    await old.recv_until(is_stream_update)
    new, _ = await auth(relay, admin, name="new")
    await old.expect_close(1000)
    final, _ = await new.recv_until(is_assistant_final("echo: second"), timeout=20)
    assert final["id"].startswith("s_")


async def test_failed_takeover_leaves_the_old_socket_active(relay):
    admin, old = await setup_admin(relay)
    intruder = await Client.connect(relay, "intruder")
    await intruder.send_json(auth_frame(Device(admin.device_id, "not-a-jwt", admin.user_id)))
    await intruder.expect("auth_result", success=False, reason="auth_failed")
    await intruder.expect_close(1008)
    await send_and_complete(old, "old socket still alive")


async def test_takeover_leaves_sibling_devices_connected(relay):
    admin, old = await setup_admin(relay)
    sibling = await pair_and_approve(relay, old, user_id=admin.user_id)
    sib_client, _ = await auth(relay, sibling)
    new, _ = await auth(relay, admin, name="new")
    await old.expect_close(1000)
    ex = await send_and_complete(new, "after takeover")
    echo, _ = await sib_client.recv_until(lambda f: f.get("id") == ex.echo["id"])
    assert echo["deviceId"] == admin.device_id
    await sib_client.assert_open()


async def test_stream_fails_when_its_socket_closes_and_is_not_resumed(relay_factory):
    relay = relay_factory(echo={"delay_ms": 400})
    admin, client = await setup_admin(relay)
    frame = message_frame("cut off")
    await client.send_json(frame)
    echo, _ = await client.recv_until(lambda f: f.get("type") == "message" and f.get("role") == "user")
    await client.recv_until(is_stream_update)
    await client.close()

    client, result = await auth(relay, admin, last_message_id=echo["id"])
    assert result["replayCount"] == 0, f"no final exists for the cut-off stream: {result}"
    await client.send_json(frame)  # same id again: the stream failed, a new id is required
    reply, skipped = await client.recv_until(lambda f: f.get("type") in ("ack", "error"))
    assert reply.get("type") == "error" and reply.get("code") == "invalid_message", reply
    assert not any(is_stream_update(f) for f in skipped), f"the stream must not resume: {skipped}"
    await send_and_complete(client, "new id works", timeout=15)


async def test_queue_is_dropped_when_the_last_socket_closes_and_a_retry_regenerates(relay_factory):
    relay = relay_factory(echo={"delay_ms": 400})
    admin, client = await setup_admin(relay)
    first, second = message_frame("active one"), message_frame("queued one")
    await client.send_json(first)
    await client.send_json(second)
    await client.recv_until(lambda f: f.get("type") == "ack" and f.get("id") == second["id"])
    await client.recv_until(is_stream_update)
    await client.close()

    client, _ = await auth(relay, admin)
    await client.send_json(second)  # acked before, never generated: retry re-runs it
    ack, _ = await client.recv_until(lambda f: f.get("type") in ("ack", "error"))
    assert ack == {"type": "ack", "id": second["id"]}, ack
    final, frames = await client.recv_until(is_assistant_final("echo: queued one"), timeout=15)
    assert not any(is_assistant_final("echo: active one")(f) for f in frames), frames
    assert not any(f.get("role") == "user" and f.get("content") == "queued one" for f in frames), \
        f"a retry is not echoed a second time: {frames}"


async def test_a_stream_cut_by_its_socket_closing_turns_typing_off_on_sibling_devices(relay_factory):
    relay = relay_factory(echo={"delay_ms": 400})
    admin, client = await setup_admin(relay)
    sibling = await pair_and_approve(relay, client, user_id=admin.user_id)
    sib_client, _ = await auth(relay, sibling)
    await client.send_json(message_frame("cut me off"))
    await sib_client.recv_until(lambda f: f.get("type") == "typing" and f.get("active") is True)
    await client.close()
    off, skipped = await sib_client.recv_until(lambda f: f.get("type") == "typing", timeout=5)
    assert off == {"type": "typing", "role": "assistant", "active": False, "channelType": "personal"}, off
    assert not any(is_assistant_final()(f) for f in skipped), skipped
    await sib_client.expect_silence(1.0, ignore=is_stream_update)


async def test_without_cancel_on_disconnect_the_answer_completes_and_is_replayed(relay_factory):
    relay = relay_factory(clawline={"cancel_on_disconnect": False}, echo={"delay_ms": 300})
    admin, client = await setup_admin(relay)
    frame = message_frame("finish without me")
    await client.send_json(frame)
    echo, _ = await client.recv_until(lambda f: f.get("type") == "message" and f.get("role") == "user")
    await client.recv_until(is_stream_update)
    await client.close()

    client, result = await auth(relay, admin, last_message_id=echo["id"])
    if result["replayCount"] == 0:  # still streaming: the snapshot, then the final arrive live
        final, _ = await client.recv_until(is_assistant_final("echo: finish without me"), timeout=15)
    else:
        final = await client.recv_json()
    assert is_assistant_final("echo: finish without me")(final), final
    await client.send_json(frame)  # the turn finished: a retry is acknowledged, nothing reruns
    ack, _ = await client.recv_until(lambda f: f.get("type") in ("ack", "error"))
    assert ack == {"type": "ack", "id": frame["id"]}, ack
