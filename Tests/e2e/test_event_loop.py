"""`[server] event_loop`: the relay on each loop it offers, named explicitly, whatever the default
and whatever `CLAWRELAY_E2E_EVENT_LOOP` says: chat, many sockets opening and closing, close codes
from the relay and from libwebsockets reaching the client, and timer-driven closes (pong timeout,
a socket that never finishes its headers)."""

import asyncio
import socket
import time

import pytest

from conftest import (
    RawWebSocket,
    auth,
    make_config,
    send_and_complete,
    setup_admin,
    wait_for,
)
from test_keepalive import KEEPALIVE, raw_session

LOOPS = ["poll", "epoll"]


def relay_on(relay_factory, loop: str, **overrides):
    cfg = make_config(**overrides)
    cfg["server"] = {"event_loop": loop}
    relay = relay_factory(cfg)
    wait_for(lambda: f"event_loop={loop}" in relay.stderr_text(), what=f"the start-up line naming event_loop={loop}")
    return relay


@pytest.mark.parametrize("loop", LOOPS)
async def test_chat_round_trip_and_a_takeover_close_1000(relay_factory, loop):
    relay = relay_on(relay_factory, loop)
    admin, old = await setup_admin(relay)
    ex = await send_and_complete(old, "over the loop")
    assert ex.final["content"] == "echo: over the loop", ex.final
    new, _ = await auth(relay, admin, name="new")
    frames = await old.expect_close(1000)
    assert frames and frames[-1].get("code") == "session_replaced", frames
    await send_and_complete(new, "still works")
    await new.close()


@pytest.mark.parametrize("loop", LOOPS)
async def test_many_sockets_open_and_close_and_chat_goes_on(relay_factory, loop):
    relay = relay_on(relay_factory, loop)
    admin, client = await setup_admin(relay)
    for _ in range(3):
        sockets = await asyncio.gather(*(RawWebSocket.connect(relay, answer_pings=True) for _ in range(100)))
        # Half leave with a close frame, half just drop their TCP connection.
        await asyncio.gather(*(raw.close() for raw in sockets[::2]))
        for raw in sockets[1::2]:
            raw.writer.transport.abort()
        ex = await send_and_complete(client, "after a wave")
        assert ex.final["content"] == "echo: after a wave", ex.final
    await client.close()


@pytest.mark.parametrize("loop", LOOPS)
async def test_close_codes_from_the_relay_and_from_libwebsockets_reach_the_client(relay_factory, loop):
    relay = relay_on(relay_factory, loop)
    # The relay's own close: a frame declaring more than the pre-auth limit is closed 1009.
    raw = await RawWebSocket.connect(relay, answer_pings=True)
    await raw.send_header_only(RawWebSocket.OP_TEXT, 25 << 20, b"{" * 4096)
    await raw.wait_closed(5)
    assert raw.close_code == 1009, raw.close_code
    # libwebsockets' own close: invalid UTF-8 in a text frame is closed 1007.
    raw = await RawWebSocket.connect(relay, answer_pings=True)
    await raw.send_frame(RawWebSocket.OP_TEXT, b'{"type":"auth","token":"\xff\xfe"}')
    await raw.wait_closed(5)
    assert raw.close_code == 1007, raw.close_code


@pytest.mark.parametrize("loop", LOOPS)
async def test_a_client_without_pongs_is_closed_by_the_relays_timers(relay_factory, loop):
    relay = relay_on(relay_factory, loop, clawline=KEEPALIVE)
    quiet = await raw_session(relay, answer_pings=False)
    started = time.monotonic()
    closed_at = await quiet.wait_closed(timeout=10)
    assert quiet.pings, "the server pinged before closing"
    assert 2.0 <= closed_at - started <= 7.0, f"closed {closed_at - started:.1f}s after auth (ping 1 s, pong timeout 3 s)"
    await quiet.close()


@pytest.mark.parametrize("loop", LOOPS)
def test_a_socket_that_never_finishes_its_headers_is_dropped(relay_factory, loop):
    relay = relay_on(relay_factory, loop)
    with socket.create_connection((relay.host, relay.port), timeout=20) as sock:
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        assert sock.recv(1024) == b"", "the relay closes a connection whose headers never end"
        assert time.monotonic() - started < 15, "dropped by the 10 s header timeout (lws's own timer)"
