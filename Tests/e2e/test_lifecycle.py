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
