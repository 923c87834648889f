"""Claude Companion downstream: auth, the generated token, welcome, ping, subscribe, errors, projects."""
import asyncio
import json
import re
import stat
import uuid

import pytest

from companion_client import (
    ISO_MS_Z_RE,
    TOKEN,
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every frame must decode in the app)
    assert_error,
    companion_config,
    cport,
    is_iso,
    make_projects,
    real,
    rest,
    rest_json,
    start_companion,
)

INVALID_TOKEN_BODY = {"error": "Invalid token", "message": "The provided auth token is not valid"}
# the real server's body when no token is sent at all (contract §3.1); docs/companion.md names only the one above
MISSING_TOKEN_BODY = {"error": "Authentication required", "message": "Please provide a valid auth token"}


@pytest.fixture
def crelay(relay_factory, tmp_path):
    return start_companion(relay_factory, tmp_path)


async def test_query_token_gets_the_welcome_the_app_waits_for(crelay):
    assert crelay.listeners["companion"][0] == "127.0.0.1", crelay.ready_line
    client = await CompanionClient.connect(crelay)  # ws://host:port/ws?token=T, exactly as the app
    welcome = client.welcome
    assert welcome["requestId"] is None, welcome
    assert ISO_MS_Z_RE.match(welcome["timestamp"]), f"ISO 8601 UTC with milliseconds: {welcome['timestamp']!r}"
    data = welcome["data"]
    assert isinstance(data["clientId"], str) and data["clientId"], data
    assert isinstance(data["serverVersion"], str) and data["serverVersion"], data
    assert "claudeCodeVersion" in data and data["claudeCodeVersion"] is None, data
    assert isinstance(data["capabilities"], list) and all(isinstance(c, str) for c in data["capabilities"]), data
    assert data["maxSessions"] == 10, data
    second = await CompanionClient.connect(crelay)
    assert second.welcome["data"]["clientId"] != data["clientId"], "every socket gets its own clientId"


async def test_any_path_and_max_sessions_from_config(relay_factory, tmp_path):
    relay = relay_factory(companion_config(projects_root=make_projects(tmp_path / "p"), max_sessions=3))
    client = await CompanionClient.connect(relay, path="/some/other/path")
    assert client.welcome["data"]["maxSessions"] == 3, client.welcome


async def test_bearer_header_with_a_device_id_works(crelay):
    client = await CompanionClient.connect(crelay, auth="bearer", device_id="bearer-device-1")
    assert client.welcome["type"] == "welcome"
    await client.assert_open()


@pytest.mark.parametrize("case", ["wrong_query", "missing", "wrong_bearer", "token_prefix"])
async def test_bad_or_missing_token_gets_nothing_then_close_1008(crelay, case):
    token, auth = {"wrong_query": ("x" * 32, "query"), "missing": (None, "query"),
                   "wrong_bearer": ("y" * 32, "bearer"), "token_prefix": (TOKEN[:-1], "query")}[case]
    client = await CompanionClient.connect(crelay, token=token, auth=auth, welcome=False)
    code, reason, frames = await client.expect_close(5)
    assert frames == [], f"a socket with a bad token gets nothing: {frames}"
    assert code == 1008 and reason == "Authentication required", (code, reason)


@pytest.mark.parametrize("case", ["missing", "wrong_bearer", "wrong_query"])
def test_rest_without_a_valid_token_is_401_with_the_servers_body(crelay, case):
    kwargs = {"missing": {"token": None}, "wrong_bearer": {"token": "z" * 32},
              "wrong_query": {"token": "z" * 32, "auth": "query"}}[case]
    for method, path in (("GET", "/api/projects"), ("GET", "/api/sessions"), ("POST", "/api/stream/start")):
        resp = rest(crelay, method, path, **kwargs)
        assert resp.status == 401, (method, path, resp.status, resp.body)
        allowed = [INVALID_TOKEN_BODY, MISSING_TOKEN_BODY] if case == "missing" else [INVALID_TOKEN_BODY]
        assert resp.json() in allowed, resp.body


def test_rest_accepts_bearer_and_query_token(crelay):
    assert rest(crelay, "GET", "/api/projects", auth="bearer").status == 200
    assert rest(crelay, "GET", "/api/projects", auth="query").status == 200


def test_health_needs_no_auth(crelay):
    body = rest_json(crelay, "GET", "/health", token=None)
    assert body["status"] == "healthy", body
    assert isinstance(body["version"], str) and body["version"], body
    assert is_iso(body["timestamp"]), body
    assert "sessions" in body, body


async def test_generated_token_is_0600_printed_by_the_cli_and_stable(relay_factory, tmp_path):
    relay = relay_factory(companion_config(projects_root=make_projects(tmp_path / "p"), auth_token=None))
    path = relay.data_dir / "companion.token"
    assert path.exists(), "without auth_token the relay generates <data_dir>/companion.token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, oct(path.stat().st_mode)
    token = path.read_text().strip()
    assert re.fullmatch(r"[0-9a-f]{64}", token), f"32 random bytes as hex: {token!r}"
    printed = (await asyncio.to_thread(relay.cli, "companion", "token")).stdout.strip()
    assert printed == token, f"`clawrelay companion token` printed {printed!r}"
    client = await CompanionClient.connect(relay, token=token)
    await client.assert_open()
    assert rest(relay, "GET", "/api/projects", token=token).status == 200
    wrong = await CompanionClient.connect(relay, token=TOKEN, welcome=False)
    assert (await wrong.expect_close())[0] == 1008
    await client.close()
    await asyncio.to_thread(relay.restart)
    assert path.read_text().strip() == token, "the generated token survives a restart"
    again = await CompanionClient.connect(relay, token=token)
    await again.assert_open()


async def test_ping_answers_pong_with_the_request_id(crelay):
    client = await CompanionClient.connect(crelay)
    pong, before = await client.request("ping", {})  # the app's PingRequest is an empty struct
    assert before == [] and pong["type"] == "pong", (before, pong)
    assert is_iso(pong["data"]["serverTime"]), pong
    assert pong["data"].get("clientTimestamp") is None, f"no client timestamp sent, none echoed: {pong}"
    stamp = "2026-01-02T03:04:05Z"
    pong, _ = await client.request("ping", {"timestamp": stamp})
    assert pong["type"] == "pong" and pong["data"]["clientTimestamp"] == stamp, pong


async def test_subscribe_answers_subscribed(crelay):
    client = await CompanionClient.connect(crelay)
    sid = str(uuid.uuid4())
    events = ["streamData", "streamComplete", "toolUse", "toolResult", "assistantMessage"]
    reply, before = await client.request("subscribe", {"events": events, "sessionIds": [sid]})
    assert before == [], before
    assert reply["type"] == "subscribed", reply
    assert reply["data"] == {**reply["data"], "events": events, "sessionIds": [sid], "success": True}, reply
    reply, _ = await client.request("subscribe", {"events": ["assistantMessage"]})  # sessionIds is optional
    assert reply["type"] == "subscribed" and reply["data"]["sessionIds"] == [] and reply["data"]["success"] is True, reply


@pytest.mark.parametrize("kind", ["sendCommand", "totallyUnknown"])
async def test_unknown_type_is_an_error_and_the_socket_stays_open(crelay, kind):
    client = await CompanionClient.connect(crelay)
    reply = await client.expect_error(kind, {"command": "x"}, "UNKNOWN_MESSAGE_TYPE")
    assert reply["requestId"] is not None
    await client.assert_open()


async def test_malformed_frames_are_invalid_message_and_the_socket_stays_open(crelay):
    client = await CompanionClient.connect(crelay)
    await client.send_raw("{this is not json")
    assert_error(await client.recv(), "INVALID_MESSAGE")
    await client.send_raw({"requestId": "NO-TYPE-1", "data": {}})
    assert_error(await client.recv(), "INVALID_MESSAGE")
    await client.send_raw({"type": 42, "data": {}})
    assert_error(await client.recv(), "INVALID_MESSAGE")
    reply = await client.expect_error("subscribe", {"events": "assistantMessage"}, "INVALID_MESSAGE")
    assert reply["requestId"], reply
    await client.assert_open()


async def test_a_malformed_claude_command_still_gets_a_claude_response(crelay):
    # docs/companion.md: "A claudeCommand is never answered with an error frame (the app would spin forever)"
    client = await CompanionClient.connect(crelay)
    reply, _ = await client.request("claudeCommand", {"command": 7, "projectPath": str(crelay.projects / "app")})
    assert reply["type"] == "claudeResponse", f"the first frame with the command's requestId: {reply}"
    assert reply["data"]["success"] is False and reply["data"]["content"] == "" and reply["data"]["error"], reply
    await client.assert_open()


async def test_permission_without_a_pending_request(crelay):
    client = await CompanionClient.connect(crelay)
    await client.expect_error("permission", {"sessionId": str(uuid.uuid4()), "response": "y", "remember": False},
                              "NO_PENDING_PERMISSION")


async def test_presence_frames_and_stream_close_get_no_answer(crelay):
    client = await CompanionClient.connect(crelay, device_id="quiet-device")
    sid = str(uuid.uuid4())
    await client.background(sid)
    await client.background("")
    await client.send("client_backgrounding", {"sessionId": sid})
    await client.send("sessionBackgrounded", {"sessionId": sid})
    await client.send("sessionForegrounded", {"sessionId": sid})
    await client.send("streamClose", {"sessionId": sid, "reason": "user_requested"})
    await client.expect_silence(1.0)
    await client.assert_open()


def test_projects_are_the_non_hidden_subfolders_of_projects_root(crelay):
    listing = rest_json(crelay, "GET", "/api/projects")
    assert real(listing["basePath"]) == real(crelay.projects), listing
    names = sorted(p["name"] for p in listing["projects"])
    assert names == ["app", "lib"], f"hidden folders and files are skipped: {listing}"
    for project in listing["projects"]:
        assert project["type"] == "folder", project
        assert real(project["path"]) == real(crelay.projects / project["name"]), project


def test_projects_root_defaults_to_data_dir_projects(relay_factory):
    relay = relay_factory(companion_config(), start=False)
    make_projects(relay.data_dir / "projects", names=("alpha",))
    relay.start()
    listing = rest_json(relay, "GET", "/api/projects")
    assert real(listing["basePath"]) == real(relay.data_dir / "projects"), listing
    assert [p["name"] for p in listing["projects"]] == ["alpha"], listing


def test_rest_body_limits_and_bad_json(relay_factory, tmp_path):
    relay = start_companion(relay_factory, tmp_path, max_frame_bytes=4096)
    big = json.dumps({"prompt": "x" * 8000, "workingDirectory": "app"}).encode()
    resp = rest(relay, "POST", "/api/ask", raw=big, headers={"Content-Type": "application/json"})
    assert resp.status == 413, (resp.status, resp.body[:200])
    resp = rest(relay, "POST", "/api/sessions/continue", raw=b"{not json", headers={"Content-Type": "application/json"})
    assert resp.status == 400, (resp.status, resp.body[:200])
    assert isinstance(resp.json().get("error"), str) and resp.json()["error"], resp.body


async def test_the_app_token_alphabet_round_trips_in_the_query(relay_factory, tmp_path):
    token = "A-Za_z0-9-" + "_" * 8 + "tail"
    relay = relay_factory(companion_config(projects_root=make_projects(tmp_path / "p"), auth_token=token))
    client = await CompanionClient.connect(relay, token=token)
    await client.assert_open()
    assert cport(relay) != relay.port, "the companion listener has its own port"
