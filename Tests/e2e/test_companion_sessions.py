"""Claude Companion downstream: the integration guide's frames, sessions, limits and the REST API."""
import asyncio
import uuid

import pytest

from companion_client import (
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every frame must decode in the app)
    assert_error,
    async_rest_json,
    claude_command,
    is_iso,
    projects,
    real,
    rest,
    rest_json,
    result_of,
    session_details,
    start_companion,
    start_project,
)
from conftest import async_wait_for

START_KEYS = ("sessionId", "projectName", "projectPath", "status", "startedAt")


@pytest.fixture
def crelay(relay_factory, tmp_path):
    return start_companion(relay_factory, tmp_path, names=("app", "lib", "tool"))


async def test_ask_answers_ask_response(crelay):
    path = projects(crelay)["app"]["path"]
    client = await CompanionClient.connect(crelay)
    reply, before = await client.request("ask", {"prompt": "question one", "workingDirectory": path}, 15)
    assert reply["type"] == "askResponse", f"the app decodes askResponse, not ask: {reply}"
    data = reply["data"]
    assert data["success"] is True and data.get("error") is None, data
    response = data["response"]
    assert response["result"] == "echo: question one" and response["is_error"] is False, response
    assert isinstance(response["duration_ms"], (int, float)), response
    sid = response["session_id"]
    assert start_project(crelay, "app")["session"]["sessionId"] == sid, "ask made the directory's session"
    assert all(f["requestId"] is None for f in before), before
    reply, _ = await client.request("ask", {"prompt": "question two", "sessionId": sid}, 15)
    assert reply["type"] == "askResponse" and reply["data"]["response"]["result"] == "echo: question two", reply
    assert reply["data"]["response"]["session_id"] == sid, reply


@pytest.mark.parametrize("field", ["prompt", "initialPrompt"])
async def test_stream_start_answers_stream_started_then_the_prompt(crelay, field):
    path = projects(crelay)["lib"]["path"]
    client = await CompanionClient.connect(crelay)
    reply, before = await client.request("streamStart", {"workingDirectory": path, field: "hello stream"})
    assert before == [] and reply["type"] == "streamStarted", (before, reply)
    sid = reply["data"]["sessionId"]
    assert isinstance(sid, str) and sid and real(reply["data"]["workingDirectory"]) == real(path), reply
    assert "sessionName" in reply["data"], reply
    result, _ = await client.recv_until(result_of(sid, "echo: hello stream"), 10)
    assert result["data"]["success"] is True, result
    again, _ = await client.request("streamStart", {"workingDirectory": path})
    assert again["type"] == "streamStarted" and again["data"]["sessionId"] == sid, "one session per directory"
    await client.expect_silence(0.5)
    continued = rest_json(crelay, "POST", "/api/sessions/continue", body={"sessionId": sid, "workingDirectory": path})
    assert continued["initialPrompt"] == ("hello stream" if field == "initialPrompt" else None), continued


async def test_stream_send(crelay):
    client = await CompanionClient.connect(crelay)
    await client.expect_error("streamSend", {"sessionId": str(uuid.uuid4()), "prompt": "x"}, "INVALID_SESSION")
    started, _ = await client.request("streamStart", {"workingDirectory": projects(crelay)["tool"]["path"]})
    sid = started["data"]["sessionId"]
    status, before = await client.request("streamSend", {"sessionId": sid, "prompt": "sent along"})
    assert before == [] and status["type"] == "sessionStatus", (before, status)
    data = status["data"]
    assert data["sessionId"] == sid and data["status"] == "processing", data
    assert is_iso(data["lastActivity"]) and isinstance(data["messageCount"], int), data
    await client.recv_until(result_of(sid, "echo: sent along"), 10)


async def test_set_working_directory(crelay):
    listing = projects(crelay)
    client = await CompanionClient.connect(crelay)
    reply, _ = await client.request("setWorkingDirectory", {"workingDirectory": listing["app"]["path"]})
    assert reply["type"] == "workingDirectorySet", f"the app decodes workingDirectorySet: {reply}"
    assert reply["data"]["success"] is True and real(reply["data"]["workingDirectory"]) == real(listing["app"]["path"]), reply
    reply, _ = await client.request("setWorkingDirectory", {"workingDirectory": "lib"})
    assert reply["type"] == "workingDirectorySet" and real(reply["data"]["workingDirectory"]) == real(listing["lib"]["path"]), \
        f"a relative directory is taken inside projects_root: {reply}"
    for outside in ("/etc", "../", "app/../../outside", str(crelay.projects.parent)):
        await client.expect_error("setWorkingDirectory", {"workingDirectory": outside}, "INVALID_WORKING_DIRECTORY")
    await client.expect_error("streamStart", {"workingDirectory": "/etc"}, "INVALID_WORKING_DIRECTORY")


@pytest.mark.parametrize("data", [{"deviceToken": "ab" * 32, "deviceInfo": "ios"}, {"token": "cd" * 32, "platform": "ios"}],
                         ids=["guide", "app"])
async def test_register_device_answers_device_registered(crelay, data):
    client = await CompanionClient.connect(crelay, device_id="push-device")
    reply, before = await client.request("registerDevice", data)
    assert before == [] and reply["type"] == "deviceRegistered", (before, reply)
    assert reply["data"]["success"] is True and isinstance(reply["data"].get("message"), str), reply


async def test_one_session_per_directory_across_every_entry_point(crelay):
    path = projects(crelay)["app"]["path"]
    sid = start_project(crelay, "app")["session"]["sessionId"]
    client = await CompanionClient.connect(crelay)
    started, _ = await client.request("streamStart", {"workingDirectory": path})
    assert started["data"]["sessionId"] == sid, started
    started, _ = await client.request("streamStart", {"workingDirectory": "app"})
    assert started["data"]["sessionId"] == sid, f"relative and absolute name one directory: {started}"
    body = await async_rest_json(crelay, "POST", "/api/stream/start", body={"workingDirectory": "app"})
    assert body["sessionId"] == sid, body
    answer = await async_rest_json(crelay, "POST", "/api/ask", body={"prompt": "dedup", "workingDirectory": path})
    assert answer["session_id"] == sid, answer
    assert [s for s, d in session_details(crelay).items() if real(d["workingDirectory"]) == real(path)] == [sid]


async def test_max_sessions(relay_factory, tmp_path):
    relay = start_companion(relay_factory, tmp_path, names=("a", "b", "c"), max_sessions=2)
    first = start_project(relay, "a")["session"]["sessionId"]
    start_project(relay, "b")
    body = start_project(relay, "c", status=429)
    assert body["success"] is False and isinstance(body["error"], str) and isinstance(body["message"], str), body
    assert all(isinstance(body["session"].get(k), str) for k in START_KEYS), f"the app decodes the whole body: {body}"
    assert start_project(relay, "a")["session"]["sessionId"] == first, "an existing directory is not a new session"
    client = await CompanionClient.connect(relay)
    c_path = str(relay.projects / "c")
    await client.expect_error("streamStart", {"workingDirectory": c_path}, "SESSION_LIMIT")
    turn = await claude_command(client, "one too many", str(uuid.uuid4()), c_path)
    assert turn.reply["type"] == "claudeResponse" and turn.reply["data"]["success"] is False, turn.reply
    assert rest(relay, "POST", "/api/stream/start", body={"workingDirectory": "c"}).status == 429
    assert rest(relay, "POST", "/api/ask", body={"prompt": "x", "workingDirectory": "c"}).status == 429


def test_project_start_failures_keep_the_apps_keys(crelay):
    for path, status in (("/api/projects/nope/start", 404), ("/api/projects/.hidden/start", 403)):
        resp = rest(crelay, "POST", path, headers={"Content-Type": "application/json"})
        assert resp.status == status, (path, resp.status, resp.body)
        body = resp.json()
        assert body["success"] is False and isinstance(body["error"], str) and isinstance(body["message"], str), body
        assert all(isinstance(body["session"].get(k), str) for k in START_KEYS), body


async def test_sessions_list_get_and_delete(crelay):
    path = projects(crelay)["app"]["path"]
    sid = start_project(crelay, "app")["session"]["sessionId"]
    listing = rest_json(crelay, "GET", "/api/sessions")
    assert sid in listing["sessions"], listing
    detail = session_details(crelay)[sid]
    assert real(detail["workingDirectory"]) == real(path) and detail["live"] is True and detail["backgrounded"] is False, detail
    assert detail["createdAt"] is not None and detail["lastActivity"] is not None, detail
    assert isinstance(detail["messageCount"], int), detail
    count = detail["messageCount"]
    await async_rest_json(crelay, "POST", f"/api/stream/{sid}", body={"prompt": "count me"})
    assert session_details(crelay)[sid]["messageCount"] > count, session_details(crelay)[sid]

    one = rest_json(crelay, "GET", f"/api/sessions/{sid}")
    assert {"sessionId", "projectPath", "status", "startedAt", "stoppedAt", "error"} <= set(one), one
    assert one["sessionId"] == sid and real(one["projectPath"]) == real(path), one
    assert rest(crelay, "GET", f"/api/sessions/{uuid.uuid4()}").status == 404
    assert rest(crelay, "DELETE", f"/api/sessions/{uuid.uuid4()}").status == 404
    deleted = rest_json(crelay, "DELETE", f"/api/sessions/{sid}")
    assert deleted["success"] is True and deleted["sessionId"] == sid and isinstance(deleted["message"], str), deleted
    after = session_details(crelay).get(sid)
    assert after is None or after["live"] is False, after


async def test_sessions_continue_every_answer(crelay):
    listing = projects(crelay)
    app, lib = listing["app"]["path"], listing["lib"]["path"]
    sid = start_project(crelay, "app")["session"]["sessionId"]
    required = {"error": "sessionId and workingDirectory are required"}
    for body in ({}, {"sessionId": sid}, {"workingDirectory": app}):
        assert rest_json(crelay, "POST", "/api/sessions/continue", status=400, body=body) == required
    missing = rest_json(crelay, "POST", "/api/sessions/continue", status=404,
                        body={"sessionId": str(uuid.uuid4()), "workingDirectory": app})
    assert missing == {"error": "Session not found"}, missing
    mismatch = rest_json(crelay, "POST", "/api/sessions/continue", status=400, body={"sessionId": sid, "workingDirectory": lib})
    assert mismatch["error"] == "Working directory mismatch", mismatch
    assert real(mismatch["expected"]) == real(app) and mismatch["provided"] == lib, mismatch
    ok = rest_json(crelay, "POST", "/api/sessions/continue", body={"sessionId": sid, "workingDirectory": app})
    assert ok["success"] is True and ok["sessionId"] == sid and real(ok["workingDirectory"]) == real(app), ok
    assert isinstance(ok["conversationStarted"], bool) and "initialPrompt" in ok, ok
    assert ok["createdAt"] is not None and ok["lastActivity"] is not None, ok


async def test_rest_ask_and_stream(crelay):
    listing = projects(crelay)
    sid = start_project(crelay, "app")["session"]["sessionId"]
    answer = await async_rest_json(crelay, "POST", "/api/ask", body={"prompt": "rest question", "workingDirectory": "app"})
    assert answer == {**answer, "type": "result", "subtype": "success", "is_error": False, "result": "echo: rest question",
                      "session_id": sid}, answer
    assert isinstance(answer["duration_ms"], (int, float)), answer

    started = rest_json(crelay, "POST", "/api/stream/start", body={"workingDirectory": listing["lib"]["path"]})
    assert started["success"] is True and started["message"] == "Session ready for commands", started
    lib = started["sessionId"]
    watcher = await CompanionClient.connect(crelay, device_id="stream-watcher")
    await watcher.subscribe(lib)
    again = rest_json(crelay, "POST", "/api/stream/start", body={"prompt": "hello lib", "workingDirectory": "lib"})
    assert again["sessionId"] == lib, again
    await watcher.recv_until(result_of(lib, "echo: hello lib"), 10)

    sent = await async_rest_json(crelay, "POST", f"/api/stream/{lib}", body={"prompt": "more"})
    assert sent["sessionId"] == lib and sent["success"] is True and sent["response"]["result"] == "echo: more", sent
    await watcher.recv_until(result_of(lib, "echo: more"), 10)
    assert rest(crelay, "POST", f"/api/stream/{uuid.uuid4()}", body={"prompt": "x"}).status == 404
    closed = rest_json(crelay, "DELETE", f"/api/stream/{lib}")
    assert closed == {**closed, "success": True, "message": "Session closed"}, closed
    gone = rest(crelay, "DELETE", f"/api/stream/{uuid.uuid4()}").json()
    assert gone == {**gone, "success": False, "message": "Session not found"}, gone


async def test_idle_sessions_close_free_their_slot_and_can_be_continued(relay_factory, tmp_path):
    # No precision is promised for idle closing (the relay sweeps periodically): a generous bound.
    relay = start_companion(relay_factory, tmp_path, names=("a", "b", "c"), max_sessions=2, idle_seconds=1)
    first = start_project(relay, "a")["session"]["sessionId"]
    start_project(relay, "b")
    start_project(relay, "c", status=429)
    await async_wait_for(lambda: session_details(relay)[first]["live"] is False, timeout=75, interval=0.5,
                         what="the idle session to close")
    assert first in session_details(relay), "a closed session's history stays"
    start_project(relay, "c")  # the slot is free again
    client = await CompanionClient.connect(relay)
    turn = await claude_command(client, "back again", first, str(relay.projects / "a"))
    assert turn.reply["type"] == "claudeResponse" and turn.reply["data"]["content"] == "echo: back again", turn.reply
    assert turn.reply["data"]["sessionId"] == first, "a closed session's id can be continued later"
    assert session_details(relay)[first]["live"] is True


async def test_commands_wait_behind_the_running_one_up_to_max_queued_commands(relay_factory, tmp_path):
    relay = start_companion(relay_factory, tmp_path, echo={"delay_ms": 300}, max_queued_commands=1)
    client = await CompanionClient.connect(relay)
    started, _ = await client.request("streamStart", {"workingDirectory": "app"})
    sid = started["data"]["sessionId"]
    rids = [await client.send("streamSend", {"sessionId": sid, "prompt": p}) for p in ("one", "two", "three")]
    command = await client.send("claudeCommand", {"command": "four", "projectPath": started["data"]["workingDirectory"],
                                                  "sessionId": sid})
    replies = {}
    while len(replies) < 4:
        frame, _ = await client.recv_until(lambda f: f.get("requestId") in (*rids, command) and f["requestId"] not in replies, 10)
        replies[frame["requestId"]] = frame
    assert [replies[r]["type"] for r in rids[:2]] == ["sessionStatus", "sessionStatus"], replies
    assert replies[rids[2]]["type"] in ("sessionStatus", "error"), replies[rids[2]]  # the failure may follow sessionStatus
    refused = await async_wait_for(lambda: [f for f in client.frames if f.get("requestId") == rids[2] and f["type"] == "error"],
                                   timeout=10, what="the third streamSend refused")
    assert len(refused) == 1, refused
    assert_error(refused[0], "QUEUE_FULL")
    full = replies[command]
    assert full["type"] == "claudeResponse" and full["data"]["success"] is False and full["data"]["error"], full
    first, _ = await client.recv_until(result_of(sid), 15)
    second, _ = await client.recv_until(result_of(sid), 15)
    assert [first["data"]["result"], second["data"]["result"]] == ["echo: one", "echo: two"], "waiting commands run in order"


@pytest.mark.parametrize("how", ["bare", "sessionBackgrounded"])
async def test_a_backgrounded_session_gets_the_longer_idle_time(relay_factory, tmp_path, how):
    relay = start_companion(relay_factory, tmp_path, names=("a", "b"), idle_seconds=1, background_idle_seconds=300)
    kept = start_project(relay, "a")["session"]["sessionId"]
    idle = start_project(relay, "b")["session"]["sessionId"]
    client = await CompanionClient.connect(relay, device_id="bg")
    await client.subscribe(kept)
    if how == "bare":
        await client.background(kept)
    else:
        await client.send("sessionBackgrounded", {"sessionId": kept})
    await async_wait_for(lambda: session_details(relay)[kept]["backgrounded"] is True, what="the session marked backgrounded")
    await async_wait_for(lambda: session_details(relay)[idle]["live"] is False, timeout=75, interval=0.5,
                         what="the foreground session to idle out")
    detail = session_details(relay)[kept]
    assert detail["live"] is True and detail["backgrounded"] is True, detail
    await client.send("sessionForegrounded", {"sessionId": kept})
    await async_wait_for(lambda: session_details(relay)[kept]["backgrounded"] is False, what="foregrounded again")


async def test_push_targets_are_logged_registered_or_rejected_without_the_token(crelay):
    client = await CompanionClient.connect(crelay, device_id="push-log-device")
    token = "ef" * 32
    reply, _ = await client.request("registerDevice", {"token": token, "platform": "ios"})
    assert reply["type"] == "deviceRegistered", reply
    await client.expect_error("registerDevice", {"token": "not-hex!", "platform": "ios"}, "INVALID_MESSAGE")
    await async_wait_for(lambda: "push target rejected" in crelay.stderr_text(), what="the rejection logged")
    log = crelay.stderr_text()
    assert "push target registered" in log and "push-log-device" in log, log[-2000:]
    assert token not in log and "not-hex!" not in log
