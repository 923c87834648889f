"""Replay on auth: cursor, cap + replayTruncated, unknown cursor -> historyReset, finalized events only."""

import uuid

import pytest

from conftest import (
    Client,
    auth,
    auth_frame,
    is_assistant_final,
    message_frame,
    pair_and_approve,
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


async def test_replay_from_latest_event_is_empty(relay):
    admin, client = await setup_admin(relay)
    events = await build_history(client, 2)
    await client.close()
    client, result = await reconnect(relay, admin, events[-1]["id"])
    assert (result["replayCount"], result["replayTruncated"], result["historyReset"]) == (0, False, False), result
    await assert_no_more_replay(client, {e["id"] for e in events})


async def test_replay_is_capped_to_the_most_recent_events(relay_factory):
    relay = relay_factory(clawline={"max_replay_messages": 3})
    admin, client = await setup_admin(relay)
    events = await build_history(client, 3)
    await client.close()
    client, result = await reconnect(relay, admin, events[0]["id"])
    assert result["replayCount"] == 3 and result["replayTruncated"] is True, result
    assert result["historyReset"] is False, result
    replayed = await read_replay(client, result)
    assert same_events(replayed, events[3:]), (replayed, events[3:])
    await assert_no_more_replay(client, {f["id"] for f in replayed})


async def test_replay_within_cap_is_not_truncated(relay_factory):
    relay = relay_factory(clawline={"max_replay_messages": 3})
    admin, client = await setup_admin(relay)
    events = await build_history(client, 2)
    await client.close()
    client, result = await reconnect(relay, admin, events[0]["id"])
    assert result["replayCount"] == 3 and result["replayTruncated"] is False, result
    assert same_events(await read_replay(client, result), events[1:])


@pytest.mark.parametrize("cap,truncated", [(3, True), (500, False)])
async def test_unknown_cursor_replays_the_tail_with_history_reset(relay_factory, cap, truncated):
    relay = relay_factory(clawline={"max_replay_messages": cap})
    admin, client = await setup_admin(relay)
    events = await build_history(client, 3)
    await client.close()
    client, result = await reconnect(relay, admin, f"s_{uuid.uuid4()}")
    expected = events[-cap:]
    assert result["replayCount"] == len(expected), result
    assert result["replayTruncated"] is truncated and result["historyReset"] is True, result
    assert same_events(await read_replay(client, result), expected)


async def test_absent_cursor_replays_the_tail(relay):
    admin, client = await setup_admin(relay)
    events = await build_history(client, 2)
    await client.close()
    client, result = await reconnect(relay, admin, None)
    assert result["replayCount"] == 4 and result["replayTruncated"] is False, result
    assert result["historyReset"] is True, result
    assert same_events(await read_replay(client, result), events)


@pytest.mark.parametrize("cursor", ["", "   "])
async def test_empty_cursor_is_invalid_message(relay, cursor):
    admin, client = await setup_admin(relay)
    await client.close()
    fresh = await Client.connect(relay)
    await fresh.send_json(auth_frame(admin, last_message_id=cursor))
    frame = await fresh.recv_json()
    assert frame.get("type") == "error" and frame.get("code") == "invalid_message", frame


async def test_sibling_device_receives_the_users_history(relay):
    admin, admin_client = await setup_admin(relay)
    sibling = await pair_and_approve(relay, admin_client, user_id=admin.user_id)
    stranger = await pair_and_approve(relay, admin_client)
    events = await build_history(admin_client, 2)
    sib_client, result = await auth(relay, sibling, last_message_id=None)
    assert result["replayCount"] == 4, result
    assert same_events(await read_replay(sib_client, result), events)
    _, other = await auth(relay, stranger, last_message_id=None)
    assert other["replayCount"] == 0 and other["replayTruncated"] is False, other


async def test_replay_excludes_an_in_flight_stream(relay_factory):
    relay = relay_factory(echo={"delay_ms": 600})
    admin, admin_client = await setup_admin(relay)
    sibling = await pair_and_approve(relay, admin_client, user_id=admin.user_id)
    done = await send_and_complete(admin_client, "finished", timeout=15)
    streaming = message_frame("in flight")
    await admin_client.send_json(streaming)
    update, _ = await admin_client.recv_until(
        lambda f: f.get("type") == "message" and f.get("role") == "assistant" and f.get("streaming") is True)

    sib_client, result = await auth(relay, sibling, last_message_id=None)
    assert result["replayCount"] == 3, f"echo+final of the first message and the second echo: {result}"
    replayed = await read_replay(sib_client, result)
    assert [f["id"] for f in replayed[:2]] == [done.echo["id"], done.final["id"]], replayed
    assert replayed[2]["role"] == "user" and replayed[2]["content"] == "in flight", replayed
    assert update["id"] not in {f["id"] for f in replayed}
    # live updates of the stream follow the replay on the sibling; the final arrives once
    final, rest = await sib_client.recv_until(is_assistant_final("echo: in flight"), timeout=15)
    assert final["id"] == update["id"]
    assert all(f.get("streaming") is True for f in rest if f.get("type") == "message"), rest


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
