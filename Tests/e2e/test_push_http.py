"""Push over plain HTTP (ntfy, signed webhooks) and when pushes go: the delay and what cancels it,
coalescing, quiet hours, and a push pending across a restart."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from datetime import datetime, timedelta, timezone

import pytest

from companion_client import app_decodes_every_frame  # noqa: F401  (autouse: every frame must decode in the app)
from companion_client import CompanionClient, result_of
from conftest import async_wait_for
from fake_apns import make_device_token
from gateway_client import GatewayClient, Identity, paired
from push_servers import fake_apns, fake_http, verify_webhook_signature  # noqa: F401  (fixtures)
from test_push_apns import (
    apns_settings,
    app_session,
    ask,
    away,
    away_phone,
    companion_relay,
    gateway_relay,
    metric,
    no_more,
    phone,
    push_audit,
    register_node,
    wait_apns,
    wait_audit,
)

SECRET_A = "whsec-alpha-0123456789abcdef"
SECRET_B = "whsec-bravo-fedcba9876543210"
NTFY_TOKEN = "tk_ntfy_secret_0123456789"


async def wait_http(server, count: int, timeout: float = 10.0) -> list[dict]:
    return await asyncio.to_thread(server.wait_for, count, timeout)


async def http_silent(server, seconds: float, since: int) -> None:
    await asyncio.to_thread(server.assert_no_request_within, seconds, since)


# --------------------------------------------------------------------------------------------
# ntfy


async def test_ntfy_posts_the_text_with_title_click_and_the_token_only_to_its_own_server(fake_http, relay_factory, tmp_path):
    home, other = fake_http(), fake_http()
    relay = companion_relay(relay_factory, tmp_path, {"ntfy_url": home.url + "/", "ntfy_token": NTFY_TOKEN, "retry_base_ms": 100})
    sid, _ = await app_session(relay)
    first = await away_phone(relay, None, device_id="first")
    second = await away_phone(relay, None, device_id="second")
    await asyncio.to_thread(relay.cli, "devices", "push", first, "--ntfy", "my-topic")
    await asyncio.to_thread(relay.cli, "devices", "push", second, "--ntfy", other.url + "/elsewhere")
    await ask(relay, "over ntfy")
    [mine] = await wait_http(home, 1)
    [theirs] = await wait_http(other, 1)
    for req, path in ((mine, "/my-topic"), (theirs, "/elsewhere")):
        h = req["headers"]
        assert req["method"] == "POST" and req["path"] == path, req
        assert req["body"].decode() == "echo: over ntfy", req
        assert h["title"] == "Claude Response Ready" and h["priority"] and h["tags"], h
        assert h["click"] == f"claude-companion://session/{sid}", h
    assert mine["headers"]["authorization"] == f"Bearer {NTFY_TOKEN}", mine["headers"]
    assert "authorization" not in theirs["headers"], "the ntfy token goes to ntfy_url's server only"
    rows = await wait_audit(relay, 2)
    assert sorted((r["sink"], r["outcome"], r["deviceId"]) for r in rows) == sorted(
        [("ntfy", "sent", first), ("ntfy", "sent", second)]), rows


# --------------------------------------------------------------------------------------------
# webhooks


async def test_every_push_reaches_each_webhook_signed_and_5xx_is_retried(fake_apns, fake_http, relay_factory, tmp_path):
    good, flaky = fake_http(), fake_http(statuses=[503, 200])
    with socket.socket() as s:  # a port nobody listens on: connection refused, retried, given up
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    hooks = [{"url": good.url + "/hooks/a", "secret": SECRET_A}, {"url": flaky.url + "/b", "secret": SECRET_B},
             {"url": f"http://127.0.0.1:{dead}/gone", "secret": SECRET_B}]
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns, webhooks=hooks))
    sid, _ = await app_session(relay)
    device = await away_phone(relay, make_device_token())
    await ask(relay, "tell everyone")
    [apns] = await wait_apns(fake_apns, 1)
    [req] = await wait_http(good, 1)
    tries = await wait_http(flaky, 2)
    await http_silent(flaky, 0.5, since=2)
    assert req["method"] == "POST" and req["path"] == "/hooks/a", req
    assert req["headers"]["content-type"].startswith("application/json"), req["headers"]
    assert verify_webhook_signature(SECRET_A, req["headers"], req["body"]), req["headers"]
    assert not verify_webhook_signature(SECRET_B, req["headers"], req["body"]), "each webhook has its own secret"
    for t in tries:
        assert t["path"] == "/b" and verify_webhook_signature(SECRET_B, t["headers"], t["body"]), t["headers"]
    event = json.loads(req["body"])
    assert set(event) == {"event", "user", "device", "conversation", "title", "body", "seq", "count", "ts"}, event
    assert event["event"] == "turn.final" and event["device"] == device and event["count"] == 1, event
    assert event["conversation"] == apns["headers"]["apns-collapse-id"], event
    assert event["title"] == "Claude Response Ready" and event["body"] == "echo: tell everyone", event
    assert isinstance(event["seq"], int) and event["seq"] > 0 and isinstance(event["user"], str) and event["user"], event
    assert abs(event["ts"] - time.time()) < 60, event
    assert json.loads(tries[1]["body"]) == json.loads(tries[0]["body"]), "a retry posts the same event"
    rows = await wait_audit(relay, 7)
    hook_rows = [(r["sink"], r["status"], r["outcome"]) for r in rows if r["sink"].startswith("webhook:")]
    assert sorted(hook_rows) == sorted([(f"webhook:127.0.0.1:{good.port}", 200, "sent"),
                                        (f"webhook:127.0.0.1:{flaky.port}", 503, "retrying"),
                                        (f"webhook:127.0.0.1:{flaky.port}", 200, "sent"),
                                        (f"webhook:127.0.0.1:{dead}", 0, "retrying"),
                                        (f"webhook:127.0.0.1:{dead}", 0, "retrying"),
                                        (f"webhook:127.0.0.1:{dead}", 0, "failed")]), rows
    # Only the final failure is a warning, naming the device, the sink and why.
    warned = [line for line in relay.stderr_text().splitlines() if "push failed" in line]
    assert len(warned) == 1 and " warning " in warned[0], warned
    assert f"device={device}" in warned[0] and f"sink=webhook:127.0.0.1:{dead}" in warned[0] and "reason=" in warned[0], warned


async def test_a_webhook_answering_410_is_disabled_until_restart(fake_apns, fake_http, relay_factory, tmp_path):
    gone = fake_http(statuses=[410])
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns, webhooks=[{"url": gone.url + "/x", "secret": SECRET_A}]))
    await app_session(relay)
    await away_phone(relay, make_device_token())
    sink = f"webhook:127.0.0.1:{gone.port}"
    await ask(relay, "first")
    await wait_http(gone, 1)
    await wait_audit(relay, 1, lambda r: r["sink"] == sink)
    assert metric(relay, "clawrelay_push_sink_healthy", f'sink="{sink}"') == 0
    await ask(relay, "second")
    await wait_apns(fake_apns, 2)
    rows = await wait_audit(relay, 2, lambda r: r["sink"] == sink)
    await http_silent(gone, 0.5, since=1)
    assert [(r["status"], r["outcome"]) for r in rows] == [(410, "failed"), (0, "skipped")], rows
    await asyncio.to_thread(relay.restart)
    await ask(relay, "third")
    [*_, again] = await wait_http(gone, 2)
    assert json.loads(again["body"])["body"] == "echo: third", "a restart turns the webhook on again"


async def test_a_working_webhook_reads_healthy_in_metrics(fake_http, relay_factory, tmp_path):
    hook = fake_http()
    relay = companion_relay(relay_factory, tmp_path, {"webhooks": [{"url": hook.url + "/ok", "secret": SECRET_A}]})
    assert metric(relay, "clawrelay_push_sink_healthy", f'sink="webhook:127.0.0.1:{hook.port}"') == 1, \
        "1 while a sink works (the metric's own help), not absent"


# --------------------------------------------------------------------------------------------
# the delay and what cancels it


@pytest.mark.parametrize("how", ["foreground", "live_elsewhere", "drained_elsewhere"])
async def test_a_delayed_push_is_cancelled_when_the_answer_is_seen(fake_apns, relay_factory, tmp_path, how):
    delay = 2 if how == "drained_elsewhere" else 1  # time enough to reconnect and drain
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns, delay_seconds=delay))
    sid, _ = await app_session(relay)
    if how != "foreground":  # another device of the user, following the session
        other = await phone(relay, None, device_id="tablet", subscribe=(sid,))
        if how == "drained_elsewhere":
            await other.close()
    client = await phone(relay, make_device_token(), subscribe=(sid,))
    await away(relay, client, sid)
    await ask(relay, "seen somewhere")
    due = time.time() + delay
    if how == "foreground":
        assert metric(relay, "clawrelay_push_pending") == 1
        await client.send("sessionForegrounded", {"sessionId": sid})
        await client.recv_until(result_of(sid, "echo: seen somewhere"), 10)  # its queue, in the foreground
    elif how == "live_elsewhere":
        await other.recv_until(result_of(sid, "echo: seen somewhere"), 10)
    else:
        assert metric(relay, "clawrelay_push_pending") == 1
        again = await CompanionClient.connect(relay, device_id="tablet", name="tablet-again")
        await again.subscribe(sid)  # its queue follows (from welcome on)
        if not any(result_of(sid, "echo: seen somewhere")(f) for f in again.frames):
            await again.recv_until(result_of(sid, "echo: seen somewhere"), 10)
    await async_wait_for(lambda: metric(relay, "clawrelay_push_pending") == 0, what="the push dropped")
    await no_more(fake_apns, max(0.3, due + 0.5 - time.time()), since=0)  # past the moment it was due
    assert metric(relay, "clawrelay_push_cancelled_total") == 1
    assert push_audit(relay) == []


async def test_a_delayed_push_is_cancelled_by_chat_history_on_an_operator(fake_apns, relay_factory):
    relay = gateway_relay(relay_factory, apns_settings(fake_apns, delay_seconds=2), echo_delay_ms=100)
    node, _, res = await register_node(relay, make_device_token())
    await node.request("node.event", {"event": "app.state", "payloadJSON": json.dumps({"state": "background"})})
    reader_id = Identity()
    reader, _ = await paired(relay, reader_id)  # paired now, so that it connects at once later
    await reader.close()
    sender, _ = await paired(relay, Identity())
    await sender.request("chat.send", {"sessionKey": "main", "message": "read me later", "idempotencyKey": "r1"})
    await sender.close()  # gone before the answer lands: nobody sees it live
    await async_wait_for(lambda: metric(relay, "clawrelay_push_pending") == 1, what="a pending push")
    due = time.time() + 2
    reader = await GatewayClient.open(relay.listeners["gateway"][1])
    assert (await reader.connect(reader_id))["ok"]
    history = await reader.request("chat.history", {"sessionKey": "main"})
    assert [m["role"] for m in history["payload"]["messages"]] == ["user", "assistant"], history
    await async_wait_for(lambda: metric(relay, "clawrelay_push_pending") == 0, what="the push dropped")
    await no_more(fake_apns, max(0.3, due + 0.5 - time.time()), since=0)
    assert metric(relay, "clawrelay_push_cancelled_total") == 1
    await asyncio.gather(node.close(), reader.close())


async def test_without_a_delay_a_push_goes_even_if_another_device_showed_it(fake_apns, relay_factory, tmp_path):
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns))
    sid, _ = await app_session(relay)
    other = await phone(relay, None, device_id="tablet", subscribe=(sid,))
    client = await phone(relay, make_device_token(), subscribe=(sid,))
    await away(relay, client, sid)
    await ask(relay, "shown and pushed")
    await other.recv_until(result_of(sid, "echo: shown and pushed"), 10)
    [req] = await wait_apns(fake_apns, 1)
    assert req["body"]["aps"]["alert"]["body"] == "echo: shown and pushed", req


async def test_answers_before_the_push_is_due_are_coalesced_into_one(fake_apns, fake_http, relay_factory, tmp_path):
    hook = fake_http()
    relay = companion_relay(relay_factory, tmp_path, apns_settings(
        fake_apns, delay_seconds=2, webhooks=[{"url": hook.url + "/h", "secret": SECRET_A}]))
    await app_session(relay)
    await away_phone(relay, make_device_token())
    start = time.time()
    for n in range(3):
        await ask(relay, f"part {n}")
    [req] = await wait_apns(fake_apns, 1, timeout=10)
    assert req["time"] - start >= 1.8, f"held back by delay_seconds: sent after {req['time'] - start:.2f}s"
    body = req["body"]
    assert body["aps"]["alert"]["body"] == "3 new messages in app" and body["totalChunks"] == 3, body
    [event] = await wait_http(hook, 1)
    assert json.loads(event["body"])["count"] == 3, event
    await no_more(fake_apns, 1.0, since=1)


@pytest.mark.parametrize("due", ["after_restart", "while_stopped"])
async def test_a_push_pending_at_shutdown_is_delivered_once_after_restart(fake_apns, relay_factory, tmp_path, due):
    delay = 2 if due == "after_restart" else 1
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns, delay_seconds=delay))
    sid, path = await app_session(relay)
    await away_phone(relay, make_device_token())
    start = time.time()
    await ask(relay, "survive the restart")
    assert metric(relay, "clawrelay_push_pending") == 1
    assert await asyncio.to_thread(relay.terminate) == 0
    if due == "while_stopped":
        await asyncio.sleep(max(0.0, start + 1.3 - time.time()))  # the push falls due while no relay runs
    assert fake_apns.requests == [], "not sent early because the relay was stopping"
    await asyncio.to_thread(relay.start)
    [req] = await wait_apns(fake_apns, 1, timeout=10)
    assert req["time"] - start >= delay - 0.2, f"still held back by the delay: {req['time'] - start:.2f}s"
    body = req["body"]
    assert body["aps"]["alert"] == {"title": "Claude Response Ready", "body": "echo: survive the restart"}, body
    assert body["aps"]["thread-id"] == sid and body["sessionId"] == sid and body["projectId"] == path, body
    assert body["payload"]["deepLink"] == f"claude-companion://session/{sid}", body
    await no_more(fake_apns, 1.0, since=1)
    assert [r["outcome"] for r in push_audit(relay)] == ["sent"]
    assert metric(relay, "clawrelay_push_pending") == 0


async def test_quiet_hours_hold_a_push(fake_apns, relay_factory, tmp_path):
    now = datetime.now(timezone.utc)
    window = f"{(now - timedelta(minutes=5)):%H:%M}-{(now + timedelta(minutes=30)):%H:%M}"
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns, quiet_hours=window, timezone="UTC"))
    await app_session(relay)
    await away_phone(relay, make_device_token())
    await ask(relay, "at night")
    await async_wait_for(lambda: metric(relay, "clawrelay_push_pending") == 1, what="the push held")
    await no_more(fake_apns, 1.5, since=0)
    assert metric(relay, "clawrelay_push_pending") == 1 and push_audit(relay) == []
