"""Push notifications over APNs (`[push]`, a fake APNs on loopback): who gets a push, what it carries,
and what the relay does with each of Apple's answers. Shared helpers for test_push_http.py and
test_push_cli.py live here too."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from companion_client import (
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every frame must decode in the app)
    async_rest_json,
    claude_command,
    companion_config,
    companion_devices,
    make_projects,
    presence_of,
    projects,
    result_of,
    same_device,
    start_project,
)
from conftest import async_wait_for, make_config
from fake_apns import Reply, make_device_token
from gateway_client import Identity, paired
from push_servers import fake_apns, fake_http  # noqa: F401  (fixtures)

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
QUIET = 0.7  # how long "nothing more is sent" is watched for


# --------------------------------------------------------------------------------------------
# shared helpers


def apns_settings(fake, **extra) -> dict:
    """A `[push]` section pointing at the fake APNs, with fast retries."""
    push = {"apns_key_file": str(fake.key_file), "apns_key_id": fake.key_id, "apns_team_id": fake.team_id,
            "apns_topic": fake.topic, "apns_endpoint": fake.endpoint, "apns_ca_file": str(fake.ca_file),
            "retry_base_ms": 100}
    push.update(extra)
    return push


def companion_relay(relay_factory, tmp_path, push: dict, echo: dict | None = None, server: dict | None = None, **companion):
    """A relay with `[companion]` (projects app and lib) and this `[push]` section."""
    root = make_projects(tmp_path / "projects")
    cfg = companion_config(projects_root=root, echo=echo or {"delay_ms": 0}, **companion)
    cfg["push"] = push
    if server is not None:
        cfg["server"] = server
    relay = relay_factory(cfg)
    relay.projects = root
    return relay


def companion_id(relay, device_id: str) -> str:
    """The relay's id for the Companion device that connected with `x-device-id: device_id`."""
    for d in companion_devices(relay):
        if same_device(d.get("deviceId"), device_id):
            return d["deviceId"]
    raise AssertionError(f"no companion device {device_id}: {companion_devices(relay)}")


async def app_session(relay, name: str = "app") -> tuple[str, str]:
    sid = (await asyncio.to_thread(start_project, relay, name))["session"]["sessionId"]
    path = (await asyncio.to_thread(projects, relay))[name]["path"]
    return sid, path


async def phone(relay, token: str | None, device_id: str = "phone", subscribe: tuple = (), guide_form: bool = False):
    """A Companion device that registered `token` (the app's `{token, platform}` or the guide's form)."""
    client = await CompanionClient.connect(relay, device_id=device_id, name=device_id)
    if token is not None:
        data = {"deviceToken": token, "deviceInfo": {"model": "iPhone"}} if guide_form else {"token": token, "platform": "ios"}
        reply, _ = await client.request("registerDevice", data)
        assert reply["type"] == "deviceRegistered" and reply["data"]["success"] is True, reply
    if subscribe:
        await client.subscribe(*subscribe)
    return client


async def away(relay, client, sid: str = "", device_id: str = "phone") -> None:
    """The app's `client_backgrounding`, and the relay's presence saying so."""
    await client.background(sid)
    await async_wait_for(lambda: presence_of(relay, device_id) == "background", timeout=5, what=f"{device_id} in the background")


async def ask(relay, prompt: str, project: str = "app") -> dict:
    """A turn with no socket taking it live (`POST /api/ask`): returns once the answer is stored."""
    answer = await async_rest_json(relay, "POST", "/api/ask", body={"prompt": prompt, "workingDirectory": project})
    assert answer["result"] == f"echo: {prompt}", answer
    return answer


def push_audit(relay, *args: str) -> list[dict]:
    return relay.audit("--protocol", "push", *args)


async def wait_audit(relay, count: int, pred=lambda row: True, timeout: float = 10.0) -> list[dict]:
    """Polls `clawrelay audit --protocol push` (the store has no event to await) until `count` rows match."""
    def rows():
        found = [r for r in push_audit(relay) if pred(r)]
        return found if len(found) >= count else None
    return await async_wait_for(rows, timeout=timeout, interval=0.2, what=f"{count} push audit rows")


async def wait_apns(fake, count: int, timeout: float = 10.0) -> list[dict]:
    return await asyncio.to_thread(fake.wait_for, count, timeout)


async def no_more(fake, seconds: float = QUIET, since: int | None = None) -> None:
    await asyncio.to_thread(fake.assert_no_request_within, seconds, since)


def metric(relay, name: str, labels: str = "") -> float:
    text = relay.http("GET", "/metrics", admin=True).body.decode()
    pattern = "^" + re.escape(name) + (re.escape("{" + labels + "}") if labels else r"(?:\{\})?") + r" (\S+)$"
    found = [float(m.group(1)) for m in re.finditer(pattern, text, re.M)]
    assert len(found) == 1, f"expected one sample of {name}{{{labels}}} in /metrics:\n" + \
        "\n".join(l for l in text.splitlines() if "push" in l)
    return found[0]


def push_entries(relay, device_id: str) -> list[dict]:
    device = relay.device(device_id)
    assert device is not None, f"{device_id} not in devices list"
    return device["push"]


# --------------------------------------------------------------------------------------------
# who gets a push


async def test_a_backgrounded_session_gets_one_push_with_the_apps_payload(fake_apns, relay_factory, tmp_path):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns), echo={"delay_ms": 200})
    sid, path = await app_session(relay)
    token = make_device_token()
    client = await phone(relay, token, subscribe=(sid,))
    before = time.time()
    await client.send("claudeCommand", {"command": "hello push", "projectPath": path, "sessionId": sid})
    await client.background(sid)  # the app's bare frame, before the answer lands
    [req] = await wait_apns(fake_apns, 1)
    assert req["status"] == 200, req
    assert req["method"] == "POST" and req["path"] == f"/3/device/{token}", req
    h = req["headers"]
    assert h["authorization"].startswith("bearer ") and req["jwt"], h
    assert h["apns-topic"] == fake_apns.topic and h["apns-push-type"] == "alert" and h["apns-priority"] == "10", h
    assert abs(int(h["apns-expiration"]) - (before + 86400)) < 60, h
    assert UUID_RE.match(h["apns-id"]), h
    collapse = h["apns-collapse-id"]
    assert collapse and collapse != sid and len(collapse.encode()) <= 64, "the relay's conversation id, not the session id"
    body = req["body"]
    aps = body["aps"]
    assert aps["alert"] == {"title": "Claude Response Ready", "body": "echo: hello push"}, aps
    assert aps["thread-id"] == sid, aps
    fields = {"sessionId": sid, "projectId": path, "projectName": "app", "title": "Claude Response Ready",
              "body": "echo: hello push", "totalChunks": 1, "isLongRunningCompletion": False,
              "deepLink": f"claude-companion://session/{sid}"}
    for where in (body, body["payload"]):
        assert {k: where.get(k) for k in fields} == fields, where
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", where["timestamp"]), where
    assert len(req["raw"]) <= 4096
    await no_more(fake_apns)
    rows = push_audit(relay)
    assert [(r["sink"], r["status"], r["outcome"]) for r in rows] == [("apns", 200, "sent")], rows
    assert rows[0]["target"] == "apns:…" + token[-4:] and rows[0]["deviceId"] == companion_id(relay, "phone"), rows
    assert rows[0]["conversation"] == collapse, rows


async def test_the_guide_form_and_a_closed_socket_get_a_push(fake_apns, relay_factory, tmp_path):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns))
    await app_session(relay)
    token = make_device_token()
    client = await phone(relay, token.upper(), guide_form=True)  # `{deviceToken, deviceInfo}`, any case
    await client.close()
    await async_wait_for(lambda: presence_of(relay, "phone") not in ("foreground", None), what="phone away")
    await ask(relay, "while you were gone")
    [req] = await wait_apns(fake_apns, 1)
    assert req["path"] == f"/3/device/{token}" and req["body"]["aps"]["alert"]["body"] == "echo: while you were gone", req


@pytest.mark.parametrize("where", ["following", "other_session"])
async def test_a_foreground_device_gets_a_push_only_for_sessions_it_does_not_follow(fake_apns, relay_factory, tmp_path, where):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns))
    sid, _ = await app_session(relay)
    lib, _ = await app_session(relay, "lib")
    client = await phone(relay, make_device_token(), subscribe=(sid if where == "following" else lib,))
    await ask(relay, "seen live")
    if where == "following":
        await client.recv_until(result_of(sid, "echo: seen live"), 10)
        await no_more(fake_apns, since=0)
        assert push_audit(relay) == []
    else:
        [req] = await wait_apns(fake_apns, 1)
        assert req["body"]["sessionId"] == sid and req["body"]["aps"]["alert"]["body"] == "echo: seen live", req


async def test_a_long_run_is_a_task_completed(fake_apns, relay_factory, tmp_path):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns, long_run_seconds=1),
                            echo={"delay_ms": 300})
    sid, path = await app_session(relay)
    client = await phone(relay, make_device_token(), subscribe=(sid,))
    await away(relay, client, sid)
    await ask(relay, "slow answer")  # four echo steps of 300 ms: over long_run_seconds
    [req] = await wait_apns(fake_apns, 1)
    body = req["body"]
    assert body["aps"]["alert"]["title"] == "🎯 Task Completed" and body["isLongRunningCompletion"] is True, body
    assert body["payload"]["isLongRunningCompletion"] is True, body


async def test_a_failed_turn_pushes_claude_request_failed(fake_apns, fake_http, relay_factory, tmp_path):
    ntfy, hook = fake_http(), fake_http()
    push = apns_settings(fake_apns, ntfy_url=ntfy.url, webhooks=[{"url": hook.url + "/h", "secret": "0123456789abcdef"}])
    relay = companion_relay(relay_factory, tmp_path, push, backend="cmd")  # cmd: `cat; exit 3`
    sid, path = await app_session(relay)
    asker = await phone(relay, None, device_id="asker", subscribe=(sid,))
    client = await phone(relay, make_device_token(), subscribe=(sid,))
    await asyncio.to_thread(relay.cli, "devices", "push", companion_id(relay, "phone"), "--ntfy", "failures")
    await away(relay, client, sid)
    turn = await claude_command(asker, "this will fail", sid, path)
    assert turn.reply["data"]["success"] is False, turn.reply
    [req] = await wait_apns(fake_apns, 1)
    body = req["body"]
    assert body["aps"]["alert"]["title"] == "Claude Request Failed" and body["title"] == "Claude Request Failed", body
    assert body["aps"]["alert"]["body"], body
    assert body["isLongRunningCompletion"] is False, body
    [note] = await asyncio.to_thread(ntfy.wait_for, 1, 10)
    assert note["headers"]["title"] == "Claude Request Failed" and note["headers"]["priority"] == "high", note["headers"]
    [event] = await asyncio.to_thread(hook.wait_for, 1, 10)
    assert json.loads(event["body"])["event"] == "turn.failed", event["body"]
    await no_more(fake_apns, 0.5, since=1)


async def test_a_long_answer_is_cut_to_150_characters_in_a_payload_under_4096_bytes(fake_apns, relay_factory, tmp_path):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns))
    await app_session(relay)
    client = await phone(relay, make_device_token())
    await client.close()
    await ask(relay, "word " * 400)
    [req] = await wait_apns(fake_apns, 1)
    text = req["body"]["aps"]["alert"]["body"]
    assert len(text) <= 150 and text.startswith("echo: word word") and text.endswith("…"), text
    assert req["body"]["body"] == text and len(req["raw"]) <= 4096, req["body"]


# --------------------------------------------------------------------------------------------
# Apple's answers


async def away_phone(relay, token: str, device_id: str = "phone") -> str:
    """A Companion device that registered `token` and closed its socket; returns the relay's id for it."""
    client = await phone(relay, token, device_id=device_id)
    await client.close()
    await async_wait_for(lambda: presence_of(relay, device_id) not in ("foreground", None), what=f"{device_id} away")
    return companion_id(relay, device_id)


async def test_bad_device_token_retires_the_target(fake_apns, relay_factory, tmp_path):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns))
    await app_session(relay)
    token = make_device_token("ba")
    device = await away_phone(relay, token)
    await ask(relay, "first")
    [req] = await wait_apns(fake_apns, 1)
    assert (req["status"], req["reason"]) == (400, "BadDeviceToken"), req
    rows = await wait_audit(relay, 1)
    assert [(r["status"], r["outcome"], r["reason"]) for r in rows] == [(400, "retired", "BadDeviceToken")], rows
    [entry] = push_entries(relay, device)
    assert entry["target"] == "apns:…" + token[-4:] and entry["retiredReason"] == "BadDeviceToken", entry
    assert isinstance(entry["retiredAt"], int) and abs(entry["retiredAt"] / 1000 - time.time()) < 60, entry
    await ask(relay, "second")
    await no_more(fake_apns, since=1)
    assert len(push_audit(relay)) == 1, "a retired token is not tried again"
    fresh = make_device_token()
    client = await phone(relay, fresh)  # the app registers a new token: pushes resume
    await client.close()
    await async_wait_for(lambda: presence_of(relay, "phone") not in ("foreground", None), what="phone away")
    assert [e["retiredAt"] for e in push_entries(relay, device)] == [None]
    await ask(relay, "third")
    [*_, last] = await wait_apns(fake_apns, 2)
    assert last["path"] == f"/3/device/{fresh}" and last["status"] == 200, last


@pytest.mark.parametrize("unregistered", ["after_registration", "before_registration"])
async def test_unregistered_retires_only_a_token_not_registered_since(fake_apns, relay_factory, tmp_path, unregistered):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns))
    await app_session(relay)
    token = make_device_token("41")
    registered = int(time.time() * 1000)
    if unregistered == "before_registration":  # Apple learned of an older install; the app registered it again since
        fake_apns.unregistered_timestamps[token] = registered - 3_600_000
    device = await away_phone(relay, token)  # default: Unregistered as of the moment APNs answers
    await ask(relay, "first")
    [req] = await wait_apns(fake_apns, 1)
    assert req["status"] == 410, req
    [row] = await wait_audit(relay, 1)
    [entry] = push_entries(relay, device)
    await ask(relay, "second")
    if unregistered == "after_registration":
        assert (row["status"], row["outcome"], row["reason"]) == (410, "retired", "Unregistered"), row
        assert entry["retiredReason"] == "Unregistered" and entry["retiredAt"], entry
        await no_more(fake_apns, since=1)
    else:
        assert row["status"] == 410 and row["outcome"] == "failed", row
        assert entry["retiredAt"] is None and entry["retiredReason"] is None, entry
        await wait_apns(fake_apns, 2)  # kept: the next answer is pushed to it again


@pytest.mark.parametrize("prefix,status", [("42", 429), ("50", 500)])
async def test_throttling_and_server_errors_are_retried_with_back_off_then_given_up(fake_apns, relay_factory, tmp_path, prefix, status):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns))  # retry_base_ms = 100
    await app_session(relay)
    token = make_device_token(prefix)
    await away_phone(relay, token)
    await ask(relay, "try harder")
    reqs = await wait_apns(fake_apns, 3)
    rows = await wait_audit(relay, 3)  # the third try is recorded as given up
    await no_more(fake_apns, 0.5, since=3)
    assert [r["status"] for r in reqs] == [status] * 3, reqs
    assert len({r["headers"]["apns-id"] for r in reqs}) == 1, "a retry is the same notification (same apns-id)"
    first, second = reqs[1]["time"] - reqs[0]["time"], reqs[2]["time"] - reqs[1]["time"]
    assert 0.045 <= first <= 0.6, f"first retry after 100 ms ± 50 %: {first:.3f}s"
    assert 0.095 <= second <= 1.0, f"second retry after 200 ms ± 50 %: {second:.3f}s"
    assert [(r["status"], r["outcome"]) for r in rows] == [(status, "retrying"), (status, "retrying"), (status, "failed")], rows
    assert metric(relay, "clawrelay_push_attempts_total", 'sink="apns",outcome="retrying"') == 2
    assert metric(relay, "clawrelay_push_attempts_total", 'sink="apns",outcome="failed"') == 1
    assert push_entries(relay, rows[0]["deviceId"])[0]["retiredAt"] is None, "a transient error never retires"


async def test_one_provider_token_and_one_connection_serve_many_pushes(fake_apns, relay_factory, tmp_path):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns))
    await app_session(relay)
    await away_phone(relay, make_device_token())
    for n in range(3):
        await ask(relay, f"answer {n}")
        await wait_apns(fake_apns, n + 1)
    reqs = fake_apns.requests
    assert [r["body"]["aps"]["alert"]["body"] for r in reqs] == ["echo: answer 0", "echo: answer 1", "echo: answer 2"], reqs
    assert len(fake_apns.jwts) == 1, f"the provider token is reused, not minted per send: {fake_apns.jwts}"
    assert fake_apns.connections == 1, "pushes share one HTTP/2 connection"
    assert len({r["headers"]["apns-id"] for r in reqs}) == 3, "each push has its own apns-id"
    assert len({r["headers"]["apns-collapse-id"] for r in reqs}) == 1, "one conversation, one collapse id"
    fake_apns.close_connections()  # APNs sends GOAWAY now and then: the next push opens a new connection
    await async_wait_for(lambda: fake_apns.open_connections == 0, what="the connection closed")
    await ask(relay, "after goaway")
    reqs = await wait_apns(fake_apns, 4)
    assert reqs[-1]["status"] == 200 and reqs[-1]["connection"] == 2 and reqs[-1]["jwt"] == reqs[0]["jwt"], reqs[-1]


async def test_an_expired_provider_token_is_reminted_and_the_send_retried_once(fake_apns, relay_factory, tmp_path):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns))
    await app_session(relay)
    await away_phone(relay, make_device_token("e0"))
    await ask(relay, "expired")
    reqs = await wait_apns(fake_apns, 2)
    await no_more(fake_apns, since=2)
    assert [(r["status"], r["reason"]) for r in reqs] == [(403, "ExpiredProviderToken"), (200, None)], reqs
    assert len(fake_apns.jwts) == 2 and reqs[0]["jwt"] != reqs[1]["jwt"], "a new JWT is minted for the retry"
    rows = await wait_audit(relay, 2)
    assert [(r["status"], r["outcome"]) for r in rows] == [(403, "retrying"), (200, "sent")], rows
    await ask(relay, "after")
    [*_, last] = await wait_apns(fake_apns, 3)
    assert last["status"] == 200 and last["jwt"] == reqs[1]["jwt"], "the new token is the one kept"


async def test_payload_too_large_is_retried_with_a_shorter_body(fake_apns, relay_factory, tmp_path):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns))
    await app_session(relay)
    token = make_device_token()
    seen: list[int] = []
    fake_apns.overrides = lambda rec: (seen.append(1) or Reply(413, "PayloadTooLarge")) if not seen else None
    await away_phone(relay, token)
    await ask(relay, "long " * 100)
    first, second = await wait_apns(fake_apns, 2)
    await no_more(fake_apns, since=2)
    long_body, short_body = first["body"]["aps"]["alert"]["body"], second["body"]["aps"]["alert"]["body"]
    assert (first["status"], second["status"]) == (413, 200), (first, second)
    assert len(short_body) < len(long_body) and short_body.endswith("…"), (long_body, short_body)
    assert short_body.rstrip("…") in long_body, (long_body, short_body)
    rows = await wait_audit(relay, 2)
    assert [(r["status"], r["outcome"]) for r in rows] == [(413, "retrying"), (200, "sent")], rows


@pytest.mark.parametrize("mistake,status,reason", [("topic", 400, "DeviceTokenNotForTopic"), ("key_id", 403, "InvalidProviderToken")])
async def test_a_configuration_apns_refuses_marks_it_unhealthy(fake_apns, relay_factory, tmp_path, mistake, status, reason):
    push = apns_settings(fake_apns, apns_key_id="WRONGKEY42") if mistake == "key_id" else apns_settings(fake_apns)
    relay = companion_relay(relay_factory, tmp_path, push)
    await app_session(relay)
    assert metric(relay, "clawrelay_push_sink_healthy", 'sink="apns"') == 1
    await away_phone(relay, make_device_token("dd" if mistake == "topic" else ""), device_id="first")
    await ask(relay, "refused")
    [req] = await wait_apns(fake_apns, 1)
    assert req["reason"] == reason, req
    [row] = await wait_audit(relay, 1)
    assert (row["status"], row["outcome"], row["reason"]) == (status, "failed", reason), row
    assert metric(relay, "clawrelay_push_sink_healthy", 'sink="apns"') == 0
    await away_phone(relay, make_device_token(), device_id="second")  # a good token: APNs stays off all the same
    await ask(relay, "not sent")
    rows = await wait_audit(relay, 3)
    assert sorted(r["outcome"] for r in rows[1:]) == ["skipped", "skipped"], rows
    await no_more(fake_apns, 0.5, since=1)
    assert metric(relay, "clawrelay_push_attempts_total", 'sink="apns",outcome="skipped"') == 2
    log = relay.stderr_text()
    assert log.count("APNs refused the relay's configuration") == 1, "the configuration error is logged once"
    assert push_entries(relay, row["deviceId"])[0]["retiredAt"] is None, "a configuration error retires nothing"


async def test_an_apns_server_the_relay_does_not_trust_gets_nothing(fake_apns, relay_factory, tmp_path):
    push = apns_settings(fake_apns)
    del push["apns_ca_file"]  # the fake's certificate is signed by a CA only that file names
    relay = companion_relay(relay_factory, tmp_path, push)
    await app_session(relay)
    await away_phone(relay, make_device_token())
    await ask(relay, "over a forged connection")
    rows = await wait_audit(relay, 3)
    assert [(r["status"], r["outcome"]) for r in rows] == [(0, "retrying"), (0, "retrying"), (0, "failed")], rows
    assert rows[-1]["reason"], rows
    assert fake_apns.requests == [] and fake_apns.tls_errors, "the handshake fails: certificates are verified"


# --------------------------------------------------------------------------------------------
# gateway nodes


def gateway_relay(relay_factory, push: dict, echo_delay_ms: int = 0):
    cfg = make_config(echo={"delay_ms": echo_delay_ms})
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    cfg["push"] = push
    return relay_factory(cfg)


async def register_node(relay, token: str, **payload):
    identity = Identity()
    node, _ = await paired(relay, identity, role="node", scopes=(), mode="node", commands=("camera.snap",))
    body = {"token": token, "topic": "com.example.app", "environment": "sandbox", **payload}
    res = await node.request("node.event", {"event": "push.apns.register", "payloadJSON": json.dumps(body)})
    return node, identity, res


async def test_push_apns_register_refuses_bad_payloads(fake_apns, relay_factory):
    relay = gateway_relay(relay_factory, apns_settings(fake_apns))
    node, identity, res = await register_node(relay, "not-hex")
    assert res["ok"] and res["payload"]["handled"] is False and res["payload"]["reason"] == "invalid_payload", res
    res = await node.request("node.event", {"event": "push.apns.register", "payloadJSON": json.dumps(
        {"token": make_device_token(), "topic": "com.example.app", "environment": "sandbox", "transport": "relay"})})
    assert res["payload"]["handled"] is False and res["payload"]["reason"] == "unsupported_transport", res
    assert relay.device(identity.device_id)["push"] == [], "nothing was registered"
    await node.close()


@pytest.mark.parametrize("state", ["background", "disconnected"])
async def test_a_gateway_node_away_gets_a_push_for_an_operators_answer(fake_apns, relay_factory, state):
    relay = gateway_relay(relay_factory, apns_settings(fake_apns))
    token = make_device_token()
    node, identity, res = await register_node(relay, token)
    assert res["ok"] and res["payload"] == {"ok": True, "event": "push.apns.register", "handled": True, "reason": "registered"}, res
    [entry] = relay.device(identity.device_id)["push"]
    assert entry["target"] == "apns:…" + token[-4:] and entry["retiredAt"] is None, entry
    if state == "background":
        ack = await node.request("node.event", {"event": "app.state", "payloadJSON": json.dumps({"state": "background"})})
        assert ack["ok"], ack
    else:
        await node.close()
    operator, _ = await paired(relay, Identity())
    res = await operator.request("chat.send", {"sessionKey": "main", "message": "wake the node", "idempotencyKey": "r1"})
    assert res["ok"], res
    await operator.event("chat", where=lambda p: p.get("state") == "final")
    [req] = await wait_apns(fake_apns, 1)
    history = await operator.request("chat.history", {"sessionKey": "main"})
    conversation = history["payload"]["sessionId"]
    assert req["path"] == f"/3/device/{token}", req
    assert req["body"]["aps"]["alert"] == {"title": "echo", "body": "echo: wake the node"}, req["body"]
    assert req["body"]["aps"]["thread-id"] == conversation and req["headers"]["apns-collapse-id"] == conversation, req
    await no_more(fake_apns, 0.5, since=1)
    await asyncio.gather(node.close(), operator.close())


async def test_a_foreground_node_gets_no_push_and_an_aborted_turn_none_either(fake_apns, relay_factory):
    relay = gateway_relay(relay_factory, apns_settings(fake_apns), echo_delay_ms=150)
    node, identity, res = await register_node(relay, make_device_token())
    assert res["payload"]["reason"] == "registered", res
    operator, _ = await paired(relay, Identity())
    await operator.request("chat.send", {"sessionKey": "main", "message": "live", "idempotencyKey": "r1"})
    await operator.event("chat", where=lambda p: p.get("state") == "final", timeout=10)
    await no_more(fake_apns, 0.5, since=0)
    await node.request("node.event", {"event": "app.state", "payloadJSON": json.dumps({"state": "background"})})
    await operator.request("chat.send", {"sessionKey": "main", "message": "stop this one", "idempotencyKey": "r2"})
    await operator.event("chat", where=lambda p: p.get("state") == "delta", timeout=10)
    res = await operator.request("chat.abort", {"sessionKey": "main", "runId": "r2"})
    assert res["ok"] and res["payload"]["aborted"] is True, res
    await no_more(fake_apns, 1.0, since=0)
    assert push_audit(relay) == [], "neither a live answer nor an aborted turn is pushed"
    await asyncio.gather(node.close(), operator.close())
