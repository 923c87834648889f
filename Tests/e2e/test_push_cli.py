"""Push from the operator's side: `clawrelay devices push` on a running relay, `devices list`,
`audit --protocol push`, secrets kept out of every output and the log, `/metrics`, and `[push]`
config errors."""

from __future__ import annotations

import asyncio
import subprocess

import pytest

from companion_client import app_decodes_every_frame  # noqa: F401  (autouse: every frame must decode in the app)
from conftest import make_config, pair_and_approve, render_toml, send_and_complete, setup_admin
from fake_apns import make_device_token
from push_servers import fake_apns, fake_http  # noqa: F401  (fixtures)
from test_config import serve_expecting_failure
from test_push_apns import (
    apns_settings,
    app_session,
    ask,
    away_phone,
    companion_relay,
    metric,
    no_more,
    push_audit,
    wait_apns,
    wait_audit,
)

WEBHOOK_SECRET = "whsec-never-print-me-0123456789"
NTFY_TOKEN = "tk_ntfy_never_print_me_42"


async def cli(relay, *args, check=True):
    return await asyncio.to_thread(relay.cli, *args, check=check)


async def clawline_pair(relay):
    """An admin device (online) and a second device of the same user (paired, offline)."""
    admin, admin_client = await setup_admin(relay)
    member = await pair_and_approve(relay, admin_client, user_id=admin.user_id, name="Phone")
    return admin, admin_client, member


async def test_devices_push_gives_an_offline_clawline_device_ntfy_then_apns_then_none(fake_apns, fake_http, relay_factory):
    ntfy = fake_http()
    cfg = make_config()
    cfg["push"] = apns_settings(fake_apns, ntfy_url=ntfy.url)
    relay = relay_factory(cfg)
    admin, client, member = await clawline_pair(relay)
    await cli(relay, "devices", "push", admin.device_id, "--ntfy", "admin-alerts")  # online: takes answers live
    out = (await cli(relay, "devices", "push", member.device_id, "--ntfy", "phone-alerts")).stdout
    assert "ntfy" in out, out
    await send_and_complete(client, "for the phone")
    [req] = await asyncio.to_thread(ntfy.wait_for, 1, 10)
    assert req["method"] == "POST" and req["path"] == "/phone-alerts", req
    assert req["body"].decode() == "echo: for the phone", req
    assert req["headers"]["title"] == "Clawline", "the conversation's title (Clawline's main conversation)"
    assert "click" not in req["headers"], "Clawline has no deep link"
    [row] = await wait_audit(relay, 1)
    assert (row["sink"], row["outcome"], row["deviceId"]) == ("ntfy", "sent", member.device_id), row
    assert [r["path"] for r in ntfy.requests] == ["/phone-alerts"], "the online admin device gets no push"

    token = make_device_token()
    await cli(relay, "devices", "push", member.device_id, "--apns", token.upper())
    await cli(relay, "devices", "push", member.device_id, "--remove", "ntfy")
    entries = relay.device(member.device_id)["push"]
    assert [e["target"] for e in entries] == ["apns:…" + token[-4:]], entries
    await send_and_complete(client, "now over apns")
    [apns] = await wait_apns(fake_apns, 1)
    assert apns["path"] == f"/3/device/{token}", apns
    assert apns["body"]["aps"]["alert"] == {"title": "Clawline", "body": "echo: now over apns"}, apns["body"]
    assert apns["body"]["aps"]["thread-id"] == apns["headers"]["apns-collapse-id"], apns

    await cli(relay, "devices", "push", member.device_id, "--remove", "apns")
    assert relay.device(member.device_id)["push"] == []
    await send_and_complete(client, "nobody to wake")
    await no_more(fake_apns, 0.7, since=1)
    assert [r["path"] for r in ntfy.requests] == ["/phone-alerts"], ntfy.requests
    assert [r["deviceId"] for r in push_audit(relay, "--device", member.device_id)] == [member.device_id] * 2
    assert push_audit(relay, "--device", admin.device_id) == []


async def test_devices_push_refuses_what_it_cannot_use(relay_factory):
    cfg = make_config()
    cfg["push"] = {"ntfy_url": "http://127.0.0.1:9"}
    relay = relay_factory(cfg)
    admin, client, member = await clawline_pair(relay)
    cases = [
        ("00000000-0000-4000-8000-000000000000", "--ntfy", "topic"),  # unknown device
        (member.device_id, "--apns", "not-hex-at-all"),
        (member.device_id, "--apns", "abcd"),  # too short
        (member.device_id, "--ntfy", "has spaces/and slashes"),
        (member.device_id, "--remove", "email"),
        (member.device_id, "--remove", "apns"),  # it has none
        (member.device_id,),  # nothing to do
        (member.device_id, "--ntfy", "a", "--apns", make_device_token()),  # two at once
    ]
    for args in cases:
        result = await cli(relay, "devices", "push", *args, check=False)
        assert result.returncode != 0, f"devices push {args} should fail: {result.stdout}"
        assert result.stderr.strip() or result.stdout.strip(), f"devices push {args} says why"
    assert relay.device(member.device_id)["push"] == []


async def test_secrets_stay_out_of_the_audit_the_device_list_and_the_log(fake_apns, fake_http, relay_factory, tmp_path):
    hook, ntfy = fake_http(), fake_http()
    push = apns_settings(fake_apns, ntfy_url=ntfy.url, ntfy_token=NTFY_TOKEN,
                         webhooks=[{"url": hook.url + "/h", "secret": WEBHOOK_SECRET}])
    relay = companion_relay(relay_factory, tmp_path, push, server={"log_level": "debug"})
    await app_session(relay)
    good, bad = make_device_token(), make_device_token("ba")
    phone = await away_phone(relay, good, device_id="phone")
    await away_phone(relay, bad, device_id="old-phone")
    await cli(relay, "devices", "push", phone, "--ntfy", "secret-topic-name")
    await ask(relay, "keep it secret")
    await wait_apns(fake_apns, 2)
    await asyncio.to_thread(hook.wait_for, 2, 10)
    await asyncio.to_thread(ntfy.wait_for, 1, 10)
    rows = await wait_audit(relay, 5)
    assert {r["sink"] for r in rows} == {"apns", "ntfy", f"webhook:127.0.0.1:{hook.port}"}, rows
    assert {r["target"] for r in rows if r["sink"] == "apns"} == {"apns:…" + good[-4:], "apns:…" + bad[-4:]}, rows
    outputs = {
        "audit --protocol push --json": relay.cli("audit", "--protocol", "push", "--json").stdout,
        "audit --protocol push": relay.cli("audit", "--protocol", "push").stdout,
        "audit --json": relay.cli("audit", "--json").stdout,
        "devices list --json": relay.cli("devices", "list", "--json").stdout,
        "devices list": relay.cli("devices", "list").stdout,
        "log": relay.stderr_text() + "\n".join(relay.stdout_lines),
    }
    assert "push target registered" in outputs["log"] and "push target retired" in outputs["log"], "the log tells"
    assert good[-4:] in outputs["devices list"], "the table shows the redacted target"
    for name, text in outputs.items():
        for secret in (good, bad, good.upper(), WEBHOOK_SECRET, NTFY_TOKEN):
            assert secret not in text, f"{name} shows a secret ({secret[:6]}…)"
        assert "secret-topic-name" not in text, f"{name} shows the ntfy topic (a topic is its own password)"


async def test_a_revoked_device_gets_no_more_pushes(fake_http, relay_factory):
    ntfy = fake_http()
    cfg = make_config()
    cfg["push"] = {"ntfy_url": ntfy.url}
    relay = relay_factory(cfg)
    admin, client, member = await clawline_pair(relay)
    await cli(relay, "devices", "push", member.device_id, "--ntfy", "member")
    await send_and_complete(client, "before")
    await asyncio.to_thread(ntfy.wait_for, 1, 10)
    await cli(relay, "devices", "revoke", member.device_id)
    await send_and_complete(client, "after the revocation")
    await asyncio.to_thread(ntfy.assert_no_request_within, 1.0, 1)


async def test_credentials_in_webhook_and_ntfy_urls_stay_out_of_the_audit_and_the_device_list(fake_apns, fake_http, relay_factory, tmp_path):
    hook, ntfy = fake_http(), fake_http()
    webhook_url = f"http://hookuser:hookpass99@127.0.0.1:{hook.port}/h"  # basic auth in the URL, as many receivers want
    relay = companion_relay(relay_factory, tmp_path, apns_settings(
        fake_apns, webhooks=[{"url": webhook_url, "secret": WEBHOOK_SECRET}]))
    await app_session(relay)
    phone = await away_phone(relay, make_device_token())
    await cli(relay, "devices", "push", phone, "--ntfy", f"http://ntfyuser:ntfypass77@127.0.0.1:{ntfy.port}/topic")
    await ask(relay, "credentials")
    [req] = await asyncio.to_thread(hook.wait_for, 1, 10)
    assert req["headers"].get("authorization", "").startswith("Basic "), "the URL's credentials are used"
    rows = await wait_audit(relay, 3)
    outputs = {
        "audit --protocol push --json": relay.cli("audit", "--protocol", "push", "--json").stdout,
        "audit --protocol push": relay.cli("audit", "--protocol", "push").stdout,
        "devices list --json": relay.cli("devices", "list", "--json").stdout,
        "devices list": relay.cli("devices", "list").stdout,
        "log": relay.stderr_text(),
    }
    for name, text in outputs.items():
        for secret in ("hookpass99", "ntfypass77"):
            assert secret not in text, f"{name} shows a password from a URL:\n{text}"
    assert {r["sink"] for r in rows if r["sink"].startswith("webhook")} == {f"webhook:127.0.0.1:{hook.port}"}, rows


async def test_metrics_count_attempts_per_sink_and_outcome(fake_apns, relay_factory, tmp_path):
    bare = relay_factory(make_config())
    text = bare.http("GET", "/metrics", admin=True).body.decode()
    assert "clawrelay_push_" not in text, "no [push], no push metrics"
    relay = companion_relay(relay_factory, tmp_path, apns_settings(fake_apns))
    for sink in ("apns", "ntfy"):
        for outcome in ("sent", "retrying", "failed", "retired", "skipped"):
            assert metric(relay, "clawrelay_push_attempts_total", f'sink="{sink}",outcome="{outcome}"') == 0
    assert metric(relay, "clawrelay_push_pending") == 0 and metric(relay, "clawrelay_push_cancelled_total") == 0
    await app_session(relay)
    await away_phone(relay, make_device_token())
    await away_phone(relay, make_device_token("ba"), device_id="stale")
    await ask(relay, "count me")
    await wait_audit(relay, 2)
    assert metric(relay, "clawrelay_push_attempts_total", 'sink="apns",outcome="sent"') == 1
    assert metric(relay, "clawrelay_push_attempts_total", 'sink="apns",outcome="retired"') == 1
    assert metric(relay, "clawrelay_push_sink_healthy", 'sink="apns"') == 1


# --------------------------------------------------------------------------------------------
# config errors


def push_config(tmp_path, **push) -> str:
    cfg = make_config()
    cfg["push"] = push
    return render_toml(cfg)


def good_apns(fake) -> dict:
    return {"apns_key_file": str(fake.key_file), "apns_key_id": fake.key_id, "apns_team_id": fake.team_id,
            "apns_topic": fake.topic, "apns_endpoint": fake.endpoint, "apns_ca_file": str(fake.ca_file)}


@pytest.mark.parametrize("case", ["missing_file", "not_a_key", "rsa_key"])
def test_an_unusable_apns_key_file_stops_start_up(fake_apns, tmp_path, case):
    key = tmp_path / "AuthKey.p8"
    if case == "not_a_key":
        key.write_text("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n")
    elif case == "rsa_key":
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", str(key)],
                       check=True, capture_output=True, timeout=60)
    key.chmod(0o600) if key.exists() else None
    _, output = serve_expecting_failure(tmp_path, push_config(tmp_path, **{**good_apns(fake_apns), "apns_key_file": str(key)}))
    assert "[push] apns_key_file" in output and str(key) in output, output


@pytest.mark.parametrize("push,needle", [
    ({"apns_key_id": "ABC123DEFG", "apns_team_id": "TEAM123456", "apns_topic": "com.example.app"}, "[push] apns_key_file"),
    ({"apns_key_file": "/dev/null", "apns_key_id": "ABC123DEFG", "apns_topic": "com.example.app"}, "[push] apns_team_id"),
    ({"apns_environment": "sandbox"}, "[push] apns_key_file"),
    ({"quiet_hours": "25:00-07:00"}, "[push] quiet_hours"),
    ({"quiet_hours": "22:00"}, "[push] quiet_hours"),
    ({"timezone": "Mars/Olympus_Mons"}, "[push] timezone"),
    ({"apns_environment": "staging", "apns_key_file": "/dev/null", "apns_key_id": "ABC123DEFG",
      "apns_team_id": "TEAM123456", "apns_topic": "t"}, "[push] apns_environment"),
    ({"webhooks": [{"url": "https://example.com/h", "secret": "short"}]}, "[[push.webhooks]] secret"),
    ({"webhooks": [{"secret": "0123456789abcdef0123"}]}, "[[push.webhooks]] url"),
    ({"delay_seconds": -1}, "[push] delay_seconds"),
], ids=["no_key_file", "no_team_id", "environment_alone", "quiet_hour_25", "quiet_hours_one_time", "timezone",
        "environment", "webhook_secret", "webhook_url", "negative_delay"])
def test_push_config_errors_name_the_key(tmp_path, push, needle):
    _, output = serve_expecting_failure(tmp_path, push_config(tmp_path, **push))
    assert needle in output, output
