"""Claude Companion downstream: durable queued delivery, holding sessions, and device presence."""
import asyncio
import json

import pytest

from companion_client import (
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every frame must decode in the app)
    chunks_of,
    claude_command,
    companion_devices,
    presence_of,
    projects,
    rest_json,
    result_of,
    same_device,
    start_companion,
    start_project,
)
from conftest import async_wait_for

ANSWER = "echo: queued answer"
SESSION_TYPES = {"streamChunk", "assistantMessage", "conversationResult", "claudeResponse", "userMessage", "error"}


@pytest.fixture
def slow(relay_factory, tmp_path):
    """Echo waits 400 ms per step: a two-word answer takes ~1.6 s, all of it after the command was sent."""
    return start_companion(relay_factory, tmp_path, echo={"delay_ms": 400})


async def open_session(relay, device="phone"):
    """The app's session on `app`, a foreground observer device holding it, and the device's socket."""
    sid = start_project(relay, "app")["session"]["sessionId"]
    path = projects(relay)["app"]["path"]
    observer = await CompanionClient.connect(relay, device_id="observer", name="observer")
    await observer.subscribe(sid)
    client = await CompanionClient.connect(relay, device_id=device, name=device)
    await client.subscribe(sid)
    return sid, path, observer, client


async def command_then_away(client, sid, path, away="background") -> str:
    rid = await client.send("claudeCommand", {"command": "queued answer", "projectPath": path, "sessionId": sid})
    if away == "background":
        await client.background(sid)  # the app's bare frame
    else:
        await client.close()
    return rid


async def away_in_background(relay, client, sid, device="phone") -> None:
    await client.background(sid)
    await async_wait_for(lambda: presence_of(relay, device) == "background", timeout=5, what="the device in the background")


async def read_queue(client, rid, timeout=15.0) -> list[dict]:
    """Frames up to and including the one with the command's requestId (queued claudeResponse)."""
    reply, before = await client.recv_until(lambda f: f.get("requestId") == rid, timeout)
    return before + [reply]


def check_queued(frames: list[dict], rid: str, sid: str, answer: str = ANSWER) -> list[dict]:
    session = [f for f in frames if f["type"] in SESSION_TYPES]
    assert all(f.get("_queued") is True for f in session), f"every missed event comes marked _queued: {session}"
    replies = [f for f in frames if f.get("requestId") == rid]
    assert len(replies) == 1 and replies[0]["type"] == "claudeResponse", f"the queued answer is a claudeResponse: {frames}"
    data = replies[0]["data"]
    assert data["content"] == answer and data["success"] is True and data["sessionId"] == sid, replies[0]
    assert any(result_of(sid, answer)(f) for f in session), f"the turn's conversationResult is queued: {session}"
    at = session.index(replies[0])
    assert not any(f["type"] == "streamChunk" for f in session[at + 1:]), f"chunks come before the claudeResponse: {session}"
    text = [c["content"] for c in chunks_of(session, sid) if c["type"] == "text"]
    assert not text or "\n\n".join(text) == answer, session
    originals = [f["_originalTimestamp"] for f in session]
    assert originals == sorted(originals), f"queued events come in their original order: {originals}"
    keys = [json.dumps({k: v for k, v in f.items() if k != "_queuedAt"}, sort_keys=True) for f in session]
    assert len(set(keys)) == len(keys), f"each queued event comes once: {session}"
    return session


@pytest.mark.parametrize("back", ["next_frame", "sessionForegrounded", "sessions_continue"])
async def test_a_backgrounded_device_gets_its_answer_queued_when_it_comes_back(slow, back):
    sid, path, observer, client = await open_session(slow)
    rid = await command_then_away(client, sid, path)
    mark = len(client.frames)
    await observer.recv_until(result_of(sid, ANSWER), 15)
    await client.expect_silence(0.7)
    assert client.frames[mark:] == [], f"nothing is delivered live while backgrounded: {client.frames[mark:]}"
    if back == "next_frame":
        await client.send("ping", {})  # any frame brings the device back to the foreground, holding the session
    elif back == "sessionForegrounded":
        await client.send("sessionForegrounded", {"sessionId": sid})
    else:
        await asyncio.to_thread(rest_json, slow, "POST", "/api/sessions/continue", headers={"x-device-id": "phone"},
                                body={"sessionId": sid, "workingDirectory": path})
    check_queued(await read_queue(client, rid), rid, sid)
    _, again = await client.subscribe(sid)
    await client.expect_silence(0.7)
    assert [f for f in again if f["type"] in SESSION_TYPES] == [], f"a second subscribe delivers nothing: {again}"


@pytest.mark.parametrize("device", ["phone", None], ids=["x-device-id", "app-without-device-id"])
async def test_a_device_whose_socket_closed_gets_the_queue_on_reconnect(slow, device):
    sid, path, observer, client = await open_session(slow, device=device)
    rid = await command_then_away(client, sid, path, away="close")
    await observer.recv_until(result_of(sid, ANSWER), 15)
    again = await CompanionClient.connect(slow, device_id=device, name="reconnected")
    frames = await read_queue(again, rid)  # within 30 s the queued events follow welcome, with no subscribe
    check_queued(frames, rid, sid)
    _, more = await again.subscribe(sid)  # what the app then sends
    await again.expect_silence(0.7)
    delivered = [f for f in again.frames if f["type"] in SESSION_TYPES]
    assert len(delivered) == len([f for f in frames if f["type"] in SESSION_TYPES]), f"delivered once: {delivered}"


@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
async def test_the_queue_survives_a_restart(slow, stop):
    sid, path, observer, client = await open_session(slow)
    rid = await command_then_away(client, sid, path, away="close")
    await observer.recv_until(result_of(sid, ANSWER), 15)
    await observer.close()
    if stop == "sigterm":
        await asyncio.to_thread(slow.restart)
    else:
        slow.kill()
        await asyncio.to_thread(slow.start)
    again = await CompanionClient.connect(slow, device_id="phone", name="after-restart")
    await again.send("subscribe", {"events": ["assistantMessage"], "sessionIds": [sid]})
    check_queued(await read_queue(again, rid), rid, sid)


@pytest.mark.parametrize("take_back", ["subscribe", "streamStart"])
async def test_stream_close_lets_the_session_go_and_its_events_wait(slow, take_back):
    sid, path, observer, client = await open_session(slow)
    await client.send("streamClose", {"sessionId": sid, "reason": "user_requested"})
    await client.expect_silence(0.3)  # no reply to streamClose
    turn = await claude_command(observer, "after close", sid, path)
    assert turn.reply["type"] == "claudeResponse" and turn.reply["data"]["success"] is True, turn.reply
    await client.expect_silence(0.7)
    assert not any(f["type"] in SESSION_TYPES for f in client.frames), f"a released session is not live: {client.frames}"
    if take_back == "subscribe":
        reply, before = await client.subscribe(sid)
    else:
        reply, before = await client.request("streamStart", {"sessionId": sid})
        assert reply["type"] == "streamStarted" and reply["data"]["sessionId"] == sid, reply
    assert before == [], f"the reply first, then the queued events: {before}"
    result, queued = await client.recv_until(result_of(sid, "echo: after close"), 10)
    for frame in queued + [result]:
        assert frame.get("_queued") is True, frame
    assert not any(f["type"] == "claudeResponse" for f in queued), "another device's reply is not this device's"
    assert "after close" in [f["data"]["content"] for f in queued if f["type"] == "userMessage"], queued


async def test_a_device_reconnecting_within_30s_holds_its_sessions(slow):
    sid, path, observer, client = await open_session(slow)
    await client.close()
    again = await CompanionClient.connect(slow, device_id="phone", name="back")
    turn = await claude_command(observer, "live again", sid, path)
    assert turn.reply["data"]["success"] is True, turn.reply
    result, _ = await again.recv_until(result_of(sid, "echo: live again"), 10)
    assert "_queued" not in result, f"the session is live on the new socket without a subscribe: {result}"


async def test_the_oldest_queued_events_are_dropped_first(relay_factory, tmp_path):
    relay = start_companion(relay_factory, tmp_path, max_queued_events=3)
    sid, path, observer, client = await open_session(relay)
    await away_in_background(relay, client, sid)
    for text in ("first", "second", "third"):  # each turn: a user message and its answer, several frames
        turn = await claude_command(observer, text, sid, path)
        assert turn.reply["data"]["success"] is True, turn.reply
    await client.expect_silence(0.5)
    _, before = await client.subscribe(sid)
    assert before == [], before
    await client.recv_until(result_of(sid, "echo: third"), 10)
    await client.expect_silence(0.7)
    queued = [f for f in client.frames if f.get("_queued")]
    # Whether the 3 counts wire frames or relay events is not said; either way only the newest survive.
    assert not any("first" in json.dumps(f["data"]) for f in queued), f"the oldest turn was dropped: {queued}"
    assert not any(f["type"] == "userMessage" and f["data"]["content"] == "second" for f in queued), queued
    keys = [json.dumps({k: v for k, v in f.items() if k != "_queuedAt"}, sort_keys=True) for f in queued]
    assert len(set(keys)) == len(keys), f"each queued event comes once: {queued}"


async def test_queued_events_expire_after_queue_ttl(relay_factory, tmp_path):
    relay = start_companion(relay_factory, tmp_path, queue_ttl_seconds=1)
    sid, path, observer, client = await open_session(relay)
    await away_in_background(relay, client, sid)
    turn = await claude_command(observer, "soon stale", sid, path)
    assert turn.reply["data"]["success"] is True, turn.reply
    await client.expect_silence(2.0)  # nothing live while backgrounded, and the queue TTL passes
    _, before = await client.subscribe(sid)
    await client.expect_silence(0.7)
    assert not any(f.get("_queued") for f in client.frames), f"expired events are not delivered: {client.frames}"


async def test_presence_follows_the_device(slow):
    sid = start_project(slow, "app")["session"]["sessionId"]
    path = projects(slow)["app"]["path"]
    client = await CompanionClient.connect(slow, device_id="presence-dev")

    async def presence(state):
        await async_wait_for(lambda: presence_of(slow, "presence-dev") == state, timeout=5, what=f"presence {state}")

    await presence("foreground")
    entry = next(d for d in companion_devices(slow) if same_device(d["deviceId"], "presence-dev"))
    assert entry["userId"] == "companion", f"every Companion client acts as [companion] user_id: {entry}"
    await client.background("")
    await presence("background")
    await client.request("ping", {})
    await presence("foreground")
    await client.send("sessionBackgrounded", {"sessionId": sid})
    await presence("background")
    await client.send("sessionForegrounded", {"sessionId": sid})
    await presence("foreground")
    await client.send("client_backgrounding", {"sessionId": sid})
    await presence("background")
    await asyncio.to_thread(rest_json, slow, "POST", "/api/sessions/continue", body={"sessionId": sid, "workingDirectory": path},
                            headers={"x-device-id": "presence-dev"})
    await presence("foreground")
    await client.close()
    await presence("offline")


async def test_devices_without_an_id_are_keyed_by_user_agent(slow):
    await CompanionClient.connect(slow, user_agent="Companion/1 CFNetwork")
    await CompanionClient.connect(slow, user_agent="Companion/1 CFNetwork")
    await CompanionClient.connect(slow, user_agent="SomethingElse/2")
    await CompanionClient.connect(slow, user_agent="Companion/1 CFNetwork", device_id="explicit-id")
    devices = await async_wait_for(lambda: (d if len(d := companion_devices(slow)) >= 3 else None), timeout=5,
                                   what="three companion devices")
    assert len(devices) == 3, f"the same user agent is one device: {devices}"
    assert any(same_device(d["deviceId"], "explicit-id") for d in devices), devices
