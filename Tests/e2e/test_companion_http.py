"""The newest Claude Companion app (HTTP + APNs, builds since 2025-08-06; companion-http.md): chat is
`POST /api/chat`, acknowledged at once, and every answer reaches the app only as one APNs push (the
fake APNs here), with a long one fetched from `GET /api/messages/:id`; `POST /api/chat/kill` stops a
turn. What the app requires (its `MessageOperations`, `PushNotificationService.processAPNSMessage`,
`AppDelegate` background entry point) is checked field by field."""
import asyncio
import json
import os
import threading
import time

from claude_cli import anthropic, claude_backend, claude_cli  # noqa: F401  (fixtures)
from companion_client import companion_config, make_projects, real, rest, rest_json
from fake_apns import make_device_token
from push_servers import fake_apns  # noqa: F401  (fixture)
from test_push_apns import UUID_RE, apns_settings, no_more, wait_apns


def http_relay(relay_factory, tmp_path, fake, backend: str = "echo", extra_backends: tuple = ()):
    """A relay with `[companion]` answering with `backend` (echo, cmd, or one of `extra_backends`) and `[push]` on the fake APNs."""
    root = make_projects(tmp_path / "projects")
    cfg = companion_config(projects_root=root, echo={"delay_ms": 0}, backend=backend)
    cfg["backends"] += list(extra_backends)
    cfg["push"] = apns_settings(fake)
    relay = relay_factory(cfg)
    relay.projects = root
    return relay


def gated_relay(relay_factory, tmp_path, fake, then: str = ""):
    """A relay whose backend prints "working", then waits until the test writes to the returned
    fifo (then prints `then`): a turn that runs as long as the test wants."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    slow = {"name": "slow", "kind": "command", "timeout_seconds": 30,
            "command": ["/bin/sh", "-c", f"cat >/dev/null; printf working; read line < {gate}; printf '{then}'"]}
    return http_relay(relay_factory, tmp_path, fake, "slow", (slow,)), gate


def post(relay, message: str, project: str, token: str | None, session: str | None = None, status: int = 200, **extra) -> dict:
    body = {"message": message, "projectPath": project, "mode": "normal", "timestamp": "2025-09-12T19:40:00Z", **extra}
    if token is not None:
        body["deviceToken"] = token
    if session is not None:
        body["sessionId"] = session
    return rest_json(relay, "POST", "/api/chat", status=status, body=body)


def accepted(ack: dict) -> dict:
    """What the app accepts: success and deliveryMethod "apns"; it stores the session id at once."""
    assert ack["success"] is True and ack["deliveryMethod"] == "apns", ack
    assert isinstance(ack["sessionId"], str) and ack["sessionId"] and "content" not in ack, ack
    return ack


def processable(push: dict, project: str) -> dict:
    """A push the app processes in the background and from Notification Center: an alert and
    content-available, the answer's keys at the root, an id it has not seen."""
    body = push["body"]
    aps = body["aps"]
    assert aps["content-available"] == 1 and aps["alert"]["title"] == "Claude Response", aps
    assert aps["alert"]["subtitle"] == project and aps["thread-id"] == project and aps["category"] == "CLAUDE_MESSAGE", aps
    assert len(aps["alert"]["body"]) <= 150, aps
    h = push["headers"]
    assert h["apns-push-type"] == "alert" and h["apns-priority"] == "10" and "apns-collapse-id" not in h, h
    assert UUID_RE.match(h["apns-id"]), h
    assert body["projectPath"] == project and body["type"] == "message", body
    assert body["claudeSessionId"] == body["sessionId"] and body["correlationId"] == body["requestId"], body
    assert isinstance(body["messageId"], str) and body["messageId"], body
    assert len(push["raw"]) <= 4096, len(push["raw"])
    return body


async def test_a_message_is_acknowledged_at_once_and_answered_by_one_push(fake_apns, relay_factory, tmp_path):
    relay = http_relay(relay_factory, tmp_path, fake_apns)
    project = real(relay.projects / "app")
    token = make_device_token()
    ack = accepted(await asyncio.to_thread(post, relay, "hello **there**", project, token))
    [push] = await wait_apns(fake_apns, 1)
    assert push["path"] == f"/3/device/{token}" and push["status"] == 200, push
    body = processable(push, project)
    assert body["message"] == "echo: hello **there**" and body["requiresFetch"] is False, body
    assert body["sessionId"] == ack["sessionId"] and body["requestId"] == ack["requestId"], (body, ack)
    assert body["aps"]["alert"]["body"] == "echo: hello there", body
    await no_more(fake_apns)  # one push per turn: no wake-up push besides it

    # The same session again: the answer comes in it; the app's resend within 5 s is not run twice.
    again = accepted(await asyncio.to_thread(post, relay, "second", project, token, ack["sessionId"]))
    assert again["sessionId"] == ack["sessionId"], again
    dup = accepted(await asyncio.to_thread(post, relay, "second", project, token, ack["sessionId"]))
    assert dup["duplicate"] is True and dup["requestId"] == again["requestId"], dup
    pushes = await wait_apns(fake_apns, 2)
    assert processable(pushes[1], project)["message"] == "echo: second", pushes[1]
    await no_more(fake_apns, since=2)
    assert pushes[1]["body"]["messageId"] != body["messageId"]

    # A session id the relay does not know (its data was wiped) is adopted, never refused.
    adopted = accepted(await asyncio.to_thread(post, relay, "where was I", project, token, "8b0c6f1e-1111-2222-3333-444455556666"))
    assert adopted["sessionId"] == "8b0c6f1e-1111-2222-3333-444455556666", adopted
    [*_, third] = await wait_apns(fake_apns, 3)
    assert processable(third, project)["sessionId"] == "8b0c6f1e-1111-2222-3333-444455556666", third

    # The workspace row runs at the projects root and answers under the same literal path.
    accepted(await asyncio.to_thread(post, relay, "all projects", "__workspace__", token, workspace=True))
    [*_, fourth] = await wait_apns(fake_apns, 4)
    assert processable(fourth, "__workspace__")["message"] == "echo: all projects", fourth


async def test_a_long_answer_is_fetched_and_ids_are_never_reused_across_a_restart(fake_apns, relay_factory, tmp_path):
    relay = http_relay(relay_factory, tmp_path, fake_apns)
    project = real(relay.projects / "app")
    token = make_device_token()
    # 2,500 characters, 5,000 bytes: APNs counts bytes. (3,000 bytes would still go inline.)
    long_text = "é" * 2500
    await asyncio.to_thread(post, relay, long_text, project, token)
    [push] = await wait_apns(fake_apns, 1)
    body = processable(push, project)
    assert body["requiresFetch"] is True and body["message"] == "" and body["preview"], body
    fetched = rest_json(relay, "GET", f"/api/messages/{body['messageId']}")
    assert fetched["result"]["content"] == "echo: " + long_text and fetched["content"] == fetched["result"]["content"], fetched
    assert isinstance(fetched["timestamp"], int) and fetched["result"]["timestamp"] == fetched["timestamp"], fetched
    assert fetched["id"] == fetched["result"]["id"] == body["messageId"], fetched
    assert all(isinstance(v, str) for v in fetched["result"]["metadata"].values()), fetched
    missing = rest_json(relay, "GET", "/api/messages/s_nothing", status=404)
    assert missing == {"success": False, "error": "NOT_FOUND", "message": "Message not found"}, missing

    relay.restart()
    assert rest_json(relay, "GET", f"/api/messages/{body['messageId']}")["result"]["content"] == "echo: " + long_text
    await asyncio.to_thread(post, relay, "after the restart", project, token)
    [_, later] = await wait_apns(fake_apns, 2)
    assert processable(later, project)["messageId"] != body["messageId"], later


async def test_failures_and_empty_answers_still_end_with_a_message_push(fake_apns, relay_factory, tmp_path):
    relay = http_relay(relay_factory, tmp_path, fake_apns, "cmd")
    project = real(relay.projects / "app")
    token = make_device_token()
    await asyncio.to_thread(post, relay, "break", project, token)
    [push] = await wait_apns(fake_apns, 1, timeout=20)
    body = processable(push, project)
    assert body["message"].startswith("⚠️ the assistant failed to answer") and body["requiresFetch"] is False, body


async def test_an_empty_answer_is_a_message_push_too(fake_apns, relay_factory, tmp_path):
    quiet = {"name": "quiet", "kind": "command", "command": ["/bin/sh", "-c", "cat >/dev/null"], "timeout_seconds": 30}
    relay = http_relay(relay_factory, tmp_path, fake_apns, "quiet", (quiet,))
    project = real(relay.projects / "app")
    await asyncio.to_thread(post, relay, "say nothing", project, make_device_token())
    [push] = await wait_apns(fake_apns, 1, timeout=20)
    assert processable(push, project)["message"].startswith("✅"), push


async def test_kill_stops_the_turn_and_no_push_follows(fake_apns, relay_factory, tmp_path):
    relay, gate = gated_relay(relay_factory, tmp_path, fake_apns)
    project = real(relay.projects / "app")
    token = make_device_token()
    ack = accepted(await asyncio.to_thread(post, relay, "long job", project, token))
    killed = rest_json(relay, "POST", "/api/chat/kill", body={"sessionId": ack["sessionId"], "reason": "User requested cancellation",
                                                                "deviceToken": token})
    assert killed["success"] is True and killed["sessionId"] == ack["sessionId"] and killed["processKilled"] is True, killed
    threading.Thread(target=lambda: open(gate, "w").close(), daemon=True).start()  # let the program end
    await no_more(fake_apns, since=0)
    again = rest_json(relay, "POST", "/api/chat/kill", body={"sessionId": "never-seen"})
    assert again["success"] is True and again["processKilled"] is False, again
    assert rest(relay, "POST", "/api/chat/kill", body={}).status == 400


def test_bad_posts_are_refused_with_an_error_the_app_shows(relay_factory, tmp_path, fake_apns):
    relay = http_relay(relay_factory, tmp_path, fake_apns)
    project = real(relay.projects / "app")
    token = make_device_token()
    cases = [
        (dict(message="hi", project=project, token=None), 400, "Device token is required"),
        (dict(message="hi", project=project, token="abc"), 400, "64 hexadecimal"),
        (dict(message="   ", project=project, token=token), 400, "Message is required"),
        (dict(message="x" * 100_001, project=project, token=token), 400, "larger than"),
        (dict(message="hi", project=str(tmp_path), token=token), 403, "outside the projects root"),
    ]
    for args, status, says in cases:
        answer = post(relay, args["message"], args["project"], args["token"], status=status)
        assert answer["success"] is False and says in answer["error"], (args["token"], answer)
    assert rest(relay, "POST", "/api/chat", body={"message": "hi"}, token=None).status == 401
    assert fake_apns.requests == []


def test_without_apns_a_post_is_refused_rather_than_never_answered(relay_factory, tmp_path):
    root = make_projects(tmp_path / "projects")
    relay = relay_factory(companion_config(projects_root=root))
    answer = post(relay, "hi", real(root / "app"), make_device_token(), status=503)
    assert answer["success"] is False and "push" in answer["error"], answer


async def test_planning_mode_runs_claude_code_in_its_plan_mode_for_that_turn_only(fake_apns, relay_factory, tmp_path, claude_cli, anthropic):
    root = make_projects(tmp_path / "projects")
    cfg = companion_config(projects_root=root, backend="claude")
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home"))
    cfg["push"] = apns_settings(fake_apns)
    relay = relay_factory(cfg)
    project, token = real(root / "app"), make_device_token()
    ack = await asyncio.to_thread(post, relay, "plan the refactor", project, token, mode="planning")
    await wait_apns(fake_apns, 1, timeout=60)
    planned = json.dumps(anthropic.turn_requests[-1]).lower()
    assert "plan mode is active" in planned and "planning mode active" not in planned, "Claude Code's own plan mode, not the prefix"
    await asyncio.to_thread(post, relay, "now do it", project, token, ack["sessionId"])
    await wait_apns(fake_apns, 2, timeout=60)
    assert "exited plan mode" in json.dumps(anthropic.turn_requests[-1]).lower(), "the next normal turn leaves plan mode"


async def test_the_optional_socket_gets_heartbeats_while_a_turn_runs(fake_apns, relay_factory, tmp_path):
    import websockets
    from companion_client import TOKEN, cport
    relay, gate = gated_relay(relay_factory, tmp_path, fake_apns, " done")
    project = real(relay.projects / "app")
    async with websockets.connect(f"ws://127.0.0.1:{cport(relay)}/ws?token={TOKEN}") as ws:
        assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "welcome"
        ack = accepted(await asyncio.to_thread(post, relay, "long job", project, make_device_token()))

        async def heartbeat(processing: bool) -> dict:
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 15))
                if frame.get("type") == "heartbeat" and frame["isProcessing"] is processing:
                    return frame
        beat = await heartbeat(True)
        # What the app's WebSocketManager reads: top-level projectPath, isProcessing, activity, elapsedSeconds (Int).
        assert beat["projectPath"] == project and beat["sessionId"] == ack["sessionId"], beat
        assert isinstance(beat["activity"], str) and isinstance(beat["elapsedSeconds"], int), beat
        threading.Thread(target=lambda: gate.write_text("go\n"), daemon=True).start()
        last = await heartbeat(False)
        assert last["activity"] == "Complete" and last["projectPath"] == project, last
    [push] = await wait_apns(fake_apns, 1)
    assert processable(push, project)["message"] == "working done", push


async def test_a_turn_cut_off_by_a_crash_still_ends_with_a_push_after_the_restart(fake_apns, relay_factory, tmp_path):
    relay, gate = gated_relay(relay_factory, tmp_path, fake_apns)
    project = real(relay.projects / "app")
    token = make_device_token()
    ack = accepted(await asyncio.to_thread(post, relay, "long job", project, token))
    relay.kill()  # kill -9: the turn is cut off with no answer
    threading.Thread(target=lambda: open(gate, "w").close(), daemon=True).start()  # let the orphaned program end
    relay.start()
    [push] = await wait_apns(fake_apns, 1, timeout=20)
    body = processable(push, project)
    assert body["message"].startswith("⚠️ The relay restarted") and body["requestId"] == ack["requestId"], body
    assert body["sessionId"] == ack["sessionId"], body
