"""Replay on auth end to end: a cursor on the real store, and large events whole and in order.

The cursor's rules (cap and replayTruncated, unknown or absent cursor and historyReset, what each
device gets, a stream in flight) are tested in memory: `Tests/ClawlineBridgeTests/ClawlineReplayTests.swift`.
"""

from conftest import (
    auth,
    send_and_complete,
    setup_admin,
)


async def build_history(client, count):
    """Run `count` exchanges; return the finalized events in order (user echo, assistant final, ...)."""
    events = []
    for i in range(count):
        ex = await send_and_complete(client, f"history {i}")
        events += [ex.echo, ex.final]
    return events


async def read_replay(client, result):
    frames = [await client.recv_json() for _ in range(result["replayCount"])]
    for f in frames:
        assert f.get("type") == "message" and f.get("streaming") is False, f"replay carries finalized messages only: {frames}"
    return frames


def same_events(replayed, expected):
    return [(f["id"], f["role"], f["content"]) for f in replayed] == [(f["id"], f["role"], f["content"]) for f in expected]


async def reconnect(relay, device, cursor):
    return await auth(relay, device, last_message_id=cursor)


async def assert_no_more_replay(client, replayed_ids):
    ex = await send_and_complete(client, "live after replay")
    stray = [f for f in ex.frames if f.get("id") in replayed_ids]
    assert stray == [], f"replay delivered more than replayCount events: {stray}"


async def test_replay_after_cursor_in_order(relay):
    admin, client = await setup_admin(relay)
    events = await build_history(client, 3)
    await client.close()
    client, result = await reconnect(relay, admin, events[1]["id"])
    assert result["replayCount"] == 4, result
    assert result["replayTruncated"] is False and result["historyReset"] is False, result
    replayed = await read_replay(client, result)
    assert same_events(replayed, events[2:]), (replayed, events[2:])
    echo = next(f for f in replayed if f["role"] == "user")
    assert echo["deviceId"] == admin.device_id and isinstance(echo["timestamp"], int), echo
    await assert_no_more_replay(client, {f["id"] for f in replayed})


async def test_replay_of_large_events_arrives_whole_and_in_order(relay_factory):
    """The relay writes a server socket's queued frames gathered, up to 64 KiB a write: frames on
    both sides of that bound, and every header length form (7-bit, 16-bit, 64-bit), arrive whole
    and in order, live and in a replay."""
    relay = relay_factory(clawline={"messages_per_second": 100})
    admin, client = await setup_admin(relay)
    contents = ["a" * 100, "b" * 125, "c" * 30_000, "é" * 32_768, "d" * 65_536, "e"]
    events = []
    for content in contents:
        ex = await send_and_complete(client, content)
        assert ex.echo["content"] == content and ex.final["content"] == f"echo: {content}"
        events += [ex.echo, ex.final]
    await client.close()
    client, result = await reconnect(relay, admin, None)
    assert result["replayCount"] == len(events) and result["replayTruncated"] is False, result
    assert same_events(await read_replay(client, result), events)
    await assert_no_more_replay(client, {f["id"] for f in events})
