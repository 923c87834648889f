"""Claude Companion downstream: the durable queue across restarts, and presence and devices as the CLI shows them.

Queued delivery, held sessions, capacity and TTL are tested in memory by
Tests/CompanionBridgeTests/CompanionQueueTests.swift.
"""
import asyncio
import json

import pytest

from companion_client import (
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every frame must decode in the app)
    chunks_of,
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
