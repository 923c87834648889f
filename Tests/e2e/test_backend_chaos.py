"""A command backend that crashes mid-stream, hangs, or floods output fails only that turn."""
import time

from conftest import auth, is_assistant_final, message_frame, pair_and_approve, setup_admin

MISBEHAVING = r'''
IFS= read -r line
case "$line" in
  *crash*) printf 'partial answer'; sleep 0.2; kill -9 $$ ;;
  *hang*) sleep 60 ;;
  *FLOODME*) yes flood ;;
  *) printf 'ok: %s' "$line" ;;
esac
'''


def misbehaving(relay_factory, timeout_seconds=2):
    return relay_factory(clawline={"backend": "cmd"},
                         cmd={"command": ["/bin/sh", "-c", MISBEHAVING], "timeout_seconds": timeout_seconds})


def is_error_for(frame_id):
    return lambda f: f.get("type") == "error" and f.get("messageId") == frame_id


async def test_crash_mid_stream_is_server_error_and_the_next_turn_works(relay_factory):
    relay = misbehaving(relay_factory)
    _, client = await setup_admin(relay)
    crash = message_frame("please crash")
    await client.send_json(crash)
    error, frames = await client.recv_until(is_error_for(crash["id"]), timeout=10)
    assert error["code"] == "server_error", error
    assert any(f.get("streaming") is True and f.get("content") == "partial answer" for f in frames), \
        f"the partial output streamed before the crash: {frames}"
    assert not any(is_assistant_final()(f) for f in frames), frames
    fine = message_frame("hello")
    await client.send_json(fine)
    final, _ = await client.recv_until(is_assistant_final("ok: hello"), timeout=10)
    assert final["streaming"] is False


async def test_flood_is_cut_off_as_server_error(relay_factory):
    relay = misbehaving(relay_factory, timeout_seconds=20)
    _, client = await setup_admin(relay)
    flood = message_frame("FLOODME please")
    await client.send_json(flood)
    error, frames = await client.recv_until(is_error_for(flood["id"]), timeout=15)
    assert error["code"] == "server_error", error
    assert not any(is_assistant_final()(f) for f in frames)
    await client.send_json(message_frame("after the storm"))
    await client.recv_until(is_assistant_final("ok: after the storm"), timeout=10)


async def test_a_hanging_turn_does_not_block_other_devices(relay_factory):
    relay = misbehaving(relay_factory, timeout_seconds=3)
    admin, admin_client = await setup_admin(relay)
    other = await pair_and_approve(relay, admin_client)
    other_client, _ = await auth(relay, other)
    hang = message_frame("hang forever")
    await admin_client.send_json(hang)
    await admin_client.recv_until(lambda f: f.get("type") == "ack" and f.get("id") == hang["id"])
    started = time.monotonic()
    await other_client.send_json(message_frame("are you there"))
    await other_client.recv_until(is_assistant_final("ok: are you there"), timeout=5)
    assert time.monotonic() - started < 2.5, "the other device waited for the hanging turn"
    error, _ = await admin_client.recv_until(is_error_for(hang["id"]), timeout=10)
    assert error["code"] == "server_error", error
