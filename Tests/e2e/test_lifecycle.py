"""Process lifecycle: SIGTERM closes sockets with 1001 and exits 0; history survives a restart."""

import asyncio

from conftest import (
    Client,
    auth,
    message_frame,
    send_and_complete,
    setup_admin,
)


async def closed_with(client, code):
    await client.expect_close(code, timeout=10)


async def test_sigterm_closes_open_sockets_with_1001_and_exits_0(relay):
    admin, authed = await setup_admin(relay)
    anonymous = await Client.connect(relay, "anonymous")
    await anonymous.assert_open()
    waiters = asyncio.gather(closed_with(authed, 1001), closed_with(anonymous, 1001))
    rc = await asyncio.to_thread(relay.terminate)
    await waiters
    assert rc == 0, f"exit code {rc}\n{relay.stderr_text()[-2000:]}"


async def test_sigterm_during_a_stream_exits_0(relay_factory):
    relay = relay_factory(echo={"delay_ms": 500})
    _, client = await setup_admin(relay)
    await client.send_json(message_frame("interrupted"))
    await client.recv_until(lambda f: f.get("type") == "ack")
    waiter = asyncio.ensure_future(closed_with(client, 1001))
    rc = await asyncio.to_thread(relay.terminate)
    await waiter
    assert rc == 0, f"exit code {rc}\n{relay.stderr_text()[-2000:]}"


async def test_history_survives_a_graceful_restart(relay):
    admin, client = await setup_admin(relay)
    ex = await send_and_complete(client, "kept across restarts")
    await client.close()
    await asyncio.to_thread(relay.restart)
    client, result = await auth(relay, admin, last_message_id=None)
    replayed = [await client.recv_json() for _ in range(result["replayCount"])]
    assert [f["id"] for f in replayed] == [ex.echo["id"], ex.final["id"]], replayed
    await send_and_complete(client, "and chat continues")


def test_ready_line_has_the_documented_form(relay):
    from conftest import READY_EXACT_RE
    match = READY_EXACT_RE.match(relay.ready_line)
    assert match, f"expected 'clawrelay ready clawline=HOST:PORT admin=HOST:PORT', got {relay.ready_line!r}"
    assert (match.group(1), int(match.group(2))) == ("127.0.0.1", relay.port)


def test_sigterm_right_after_ready_exits_0(relay_factory):
    # a supervisor may stop the relay at any moment after it reports ready
    for _ in range(5):
        relay = relay_factory()
        rc = relay.terminate(timeout=8)
        assert rc == 0, f"exit code {rc} on SIGTERM right after the ready line"


def silent_websocket(relay):
    """A client that upgrades to a WebSocket on the Clawline listener and then never reads or
    answers anything, so the relay's graceful stop waits its whole grace for it."""
    import base64
    import os
    import socket

    sock = socket.create_connection(("127.0.0.1", relay.port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{relay.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    assert b" 101 " in sock.recv(4096).split(b"\r\n", 1)[0] + b" ", "the upgrade was refused"
    return sock


def test_a_second_stop_signal_ends_a_stop_that_waits_at_once(relay):
    import signal
    import time

    sock = silent_websocket(relay)
    relay.expected_exit = 128 + signal.SIGTERM
    try:
        relay.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        while "stopping:" not in relay.stderr_text():
            assert time.monotonic() < deadline, "the relay never said it was stopping"
            assert relay.proc.poll() is None, f"the stop did not wait for the silent client\n{relay.stderr_text()[-2000:]}"
            time.sleep(0.02)
        second = time.monotonic()
        relay.proc.send_signal(signal.SIGTERM)
        rc = relay.proc.wait(timeout=10)
        took = time.monotonic() - second
        text = relay.stderr_text()
        assert rc == 128 + signal.SIGTERM, f"exit code {rc}\n{text[-2000:]}"
        assert "second stop signal" in text and "] stopped" not in text, text[-2000:]
        assert took < 1.5, f"the second signal took {took:.2f} s to end the process (the stop's grace is 2 s)"
    finally:
        sock.close()
