"""Server-initiated keepalive: pings at the configured interval, close on missing pongs, client pings ignored."""

import time

from conftest import (
    RawWebSocket,
    auth_frame,
    message_frame,
    pair_first_admin,
)

KEEPALIVE = {"ping_interval_seconds": 1, "pong_timeout_seconds": 3}


async def raw_session(relay, answer_pings):
    admin = await pair_first_admin(relay)
    raw = await RawWebSocket.connect(relay, answer_pings=answer_pings)
    await raw.send_json(auth_frame(admin))
    result = await raw.recv_json()
    assert result.get("type") == "auth_result" and result.get("success") is True, result
    return raw


async def wait_for_ack(raw, msg_id, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        frame = await raw.recv_json(max(0.01, deadline - time.monotonic()))
        if frame.get("type") == "ack" and frame.get("id") == msg_id:
            return frame


async def test_server_pings_and_a_responsive_client_stays_connected(relay_factory):
    relay = relay_factory(clawline=KEEPALIVE)
    raw = await raw_session(relay, answer_pings=True)
    started = time.monotonic()
    await raw.wait_pings(5, timeout=10)
    assert time.monotonic() - started > KEEPALIVE["pong_timeout_seconds"], "alive past the pong timeout"
    gaps = [b - a for a, b in zip(raw.pings, raw.pings[1:])]
    assert all(0.4 < g < 2.5 for g in gaps), f"ping gaps should be about 1 s: {gaps}"
    frame = message_frame("still here")
    await raw.send_json(frame)
    await wait_for_ack(raw, frame["id"])
    assert raw.closed_at is None
    await raw.close()


async def test_client_without_pongs_is_closed_after_the_pong_timeout(relay_factory):
    relay = relay_factory(clawline=KEEPALIVE)
    raw = await raw_session(relay, answer_pings=False)
    started = time.monotonic()
    closed_at = await raw.wait_closed(timeout=10)
    elapsed = closed_at - started
    assert raw.pings, "the server pinged before closing"
    assert 2.0 <= elapsed <= 7.0, f"closed {elapsed:.1f}s after auth (ping 1 s, pong timeout 3 s)"
    await raw.close()


async def test_client_pings_are_ignored(relay_factory):
    relay = relay_factory(clawline=KEEPALIVE)
    raw = await raw_session(relay, answer_pings=True)
    for _ in range(3):
        await raw.send_frame(RawWebSocket.OP_PING, b"client-ping")
    frame = message_frame("after client pings")
    await raw.send_json(frame)
    await wait_for_ack(raw, frame["id"])
    assert raw.closed_at is None, f"server closed after client pings (code {raw.close_code})"
    await raw.close()
