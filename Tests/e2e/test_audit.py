"""Audit trail: frames in and out are recorded, secrets are redacted, nothing secret lands on disk."""

import asyncio
import json
import re

from conftest import (
    PNG_1PX,
    async_wait_for,
    send_and_complete,
    setup_admin,
    upload,
)

ROW_FIELDS = {"time", "connection", "protocol", "direction", "kind", "deviceId", "userId", "opcode", "size", "body"}
REDACTED_RE = re.compile(r"sha256:[0-9a-f]{8}")


def text_of(row) -> str:
    body = row.get("body")
    return body if isinstance(body, str) else json.dumps(body)


def rows_with(relay, needle, *args):
    rows = relay.audit(*args)
    return [r for r in rows if needle in text_of(r)]


async def test_frames_in_and_out_are_audited(relay):
    admin, client = await setup_admin(relay)
    await send_and_complete(client, "audit me please")
    rows = await async_wait_for(
        lambda: (lambda rs: rs if {r["direction"] for r in rs} >= {"in", "out"} else None)(
            rows_with(relay, "audit me please", "--since", "10m")),
        timeout=10, what="audit rows for the message")
    for row in rows:
        assert ROW_FIELDS <= set(row), row
        assert row["protocol"] == "clawline" and row["kind"] == "ws", row
        assert isinstance(row["size"], int) and row["size"] > 0, row
    inbound = [r for r in rows if r["direction"] == "in"]
    assert inbound and all(r["deviceId"] == admin.device_id and r["userId"] == admin.user_id for r in inbound), inbound
    outbound_texts = " ".join(text_of(r) for r in relay.audit("--since", "10m") if r["direction"] == "out")
    assert "echo: audit me please" in outbound_texts


async def test_audit_filters_by_device_and_protocol(relay):
    admin, admin_client = await setup_admin(relay)
    await send_and_complete(admin_client, "filtered")
    await async_wait_for(lambda: rows_with(relay, "filtered", "--device", admin.device_id), timeout=10,
                         what="rows for the admin device")
    rows = relay.audit("--device", admin.device_id, "--protocol", "clawline", "--since", "10m")
    assert rows and all(r["deviceId"] == admin.device_id and r["protocol"] == "clawline" for r in rows), rows
    assert relay.audit("--device", "00000000-0000-4000-8000-000000000000") == []


async def test_tokens_are_redacted_in_audit(relay):
    admin, client = await setup_admin(relay)
    upload(relay, admin.token, PNG_1PX)
    await send_and_complete(client, "after auth")
    signature = admin.token.split(".")[2]

    await async_wait_for(lambda: rows_with(relay, "after auth"), timeout=10, what="audit rows")
    await async_wait_for(lambda: [r for r in relay.audit() if r.get("kind") == "http"], timeout=10, what="http audit rows")
    raw = relay.cli("audit", "--json").stdout
    assert admin.token not in raw and signature not in raw, "JWT or its signature leaked into the audit output"
    pair_rows = [r for r in relay.audit() if "pair_result" in text_of(r)]
    auth_in = [r for r in relay.audit() if r["direction"] == "in" and '"auth"' in text_of(r).replace(" ", "")]
    assert pair_rows and auth_in, "pairing and auth frames are audited"
    for row in pair_rows + auth_in:
        assert REDACTED_RE.search(text_of(row)), f"token field should read sha256:<8 hex>: {row}"
    http_rows = [r for r in relay.audit() if r.get("kind") == "http"]
    assert any("upload" in json.dumps(r) for r in http_rows), http_rows


async def test_no_token_on_disk_or_in_logs_after_a_session(relay):
    admin, client = await setup_admin(relay)
    asset = upload(relay, admin.token, PNG_1PX).json()["assetId"]
    relay.http("GET", f"/download/{asset}", headers=admin.bearer)
    await send_and_complete(client, "secret-free session")
    await async_wait_for(lambda: rows_with(relay, "secret-free session"), timeout=10, what="audit flushed")
    await client.close()
    assert relay.terminate() == 0

    token = admin.token.encode()
    signature = admin.token.split(".")[2].encode()
    leaks = []
    for path in relay.workdir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if token in data or signature in data:
                leaks.append(str(path.relative_to(relay.workdir)))
    stdout = "\n".join(relay.stdout_lines).encode()
    if token in stdout or signature in stdout:
        leaks.append("<stdout>")
    assert leaks == [], f"JWT or its signature found in: {leaks}"


async def test_audit_cli_validates_and_accepts_what_it_prints(relay):
    admin, client = await setup_admin(relay)
    await send_and_complete(client, "line one\nline two")
    await async_wait_for(lambda: rows_with(relay, "line one", "--since", "10m"), timeout=10, what="rows")
    # --device takes the 8-character prefix the text output prints; --since takes -5m and RFC 3339.
    assert relay.audit("--device", admin.device_id[:8], "--since", "-5m")
    assert relay.audit("--since", "2000-01-01T00:00:00Z")
    assert relay.audit("--since", "2999-01-01T00:00:00Z") == []
    bad = relay.cli("audit", "--protocol", "foo", check=False)
    assert bad.returncode == 1 and "clawline" in bad.stderr, bad.stderr
    # The text output keeps one record per line, even for HTTP records with line breaks inside.
    assert upload(relay, admin.token, PNG_1PX).status == 200
    await async_wait_for(lambda: [r for r in relay.audit("--since", "10m") if r["kind"] == "http" and "\n" in text_of(r)],
                         timeout=10, what="an HTTP record with a line break")
    text = relay.cli("audit", "--since", "10m").stdout
    assert all(re.match(r"^\d{4}-\d\d-\d\dT", line) for line in text.splitlines() if line), text[-2000:]


async def test_the_admin_listener_is_not_audited_unless_asked(relay_factory):
    from conftest import make_config
    plain = relay_factory()
    plain.http("GET", "/metrics", admin=True)
    assert not [r for r in plain.audit("--since", "10m") if r["protocol"] == "admin"]
    cfg = make_config(audit={"admin": True})
    audited = relay_factory(cfg)
    audited.http("GET", "/healthz", admin=True)
    await async_wait_for(lambda: [r for r in audited.audit("--since", "10m") if r["protocol"] == "admin"], timeout=10,
                         what="admin rows when [audit] admin = true")


async def test_pairing_frames_carry_the_device_id(relay):
    from conftest import Client, new_device_id, pair_request
    await setup_admin(relay)
    device_id = new_device_id()
    requester = await Client.connect(relay, "requester")
    await requester.send_json(pair_request(device_id, "Tablet"))
    rows = await async_wait_for(lambda: relay.audit("--device", device_id), timeout=10, what="rows for the pairing device")
    assert any(r["direction"] == "in" and "pair_request" in text_of(r) for r in rows), rows


async def test_discoclaw_and_companion_rows_name_their_device_and_every_protocol_filters(relay_factory, tmp_path):
    """Issue 25 item 3: `--protocol discoclaw` was refused, and DiscoClaw rows named no device."""
    from companion_client import CompanionClient, companion_config, make_projects, rest_json, same_device
    from discoclaw_client import SETUP_TOKEN, Socket, register, turn

    cfg = companion_config(projects_root=make_projects(tmp_path / "projects"))
    cfg["discoclaw"] = {"listen": "127.0.0.1:0", "setup_token": SETUP_TOKEN, "backend": "echo"}
    relay = relay_factory(cfg)
    dev = register(relay)
    sock = await Socket.connect(relay, dev.token)
    conversation = dev.create_conversation("audited")
    await turn(dev, sock, conversation["id"], "disco audit")
    phone = await CompanionClient.connect(relay, device_id="phone-12345678")
    await asyncio.to_thread(rest_json, relay, "GET", "/api/projects", headers={"x-device-id": "phone-12345678"})

    def discoclaw_rows():
        rows = relay.audit("--protocol", "discoclaw")
        return rows if any("disco audit" in text_of(r) for r in rows) and any(r["opcode"] == "open" for r in rows) else None

    rows = await async_wait_for(discoclaw_rows, timeout=10, what="DiscoClaw rows, the socket's open among them")
    assert {r["protocol"] for r in rows} == {"discoclaw"}, rows
    # Every row of an authenticated request or socket names the device; only the registration's
    # request (made before the device existed) does not.
    unnamed = [r for r in rows if r["deviceId"] is None]
    assert [r["body"] for r in unnamed] == ["POST /auth/register"], unnamed
    assert all(r["deviceId"] == dev.device_id and r["userId"] == dev.user_id for r in rows if r not in unnamed), rows
    by_prefix = relay.audit("--device", dev.device_id[:8])
    assert by_prefix and {r["protocol"] for r in by_prefix} == {"discoclaw"}, by_prefix
    assert len(by_prefix) == len(rows) - 1

    companion = await async_wait_for(
        lambda: [r for r in relay.audit("--protocol", "companion") if r["kind"] == "http"] or None, timeout=10,
        what="Companion REST rows")
    assert all(same_device(r["deviceId"], "phone-12345678") for r in companion), companion
    socket_rows = [r for r in relay.audit("--protocol", "companion") if r["kind"] == "ws"]
    assert socket_rows and all(same_device(r["deviceId"], "phone-12345678") for r in socket_rows), socket_rows
    await phone.close()
    await sock.close()

    for name in ("clawline", "gateway", "companion", "discoclaw", "admin", "client", "push", "audit"):
        assert relay.cli("audit", "--protocol", name, "--limit", "1").returncode == 0, name
    bad = relay.cli("audit", "--protocol", "smtp", check=False)
    assert bad.returncode == 1 and "discoclaw" in bad.stderr and "push" in bad.stderr, bad.stderr


async def test_limit_prints_the_newest_rows_oldest_first(relay):
    """Issue 25 item 6: `--limit N` printed the oldest N; like `journalctl -n` it is the newest N."""
    admin, client = await setup_admin(relay)
    for index in range(3):
        await send_and_complete(client, f"numbered {index}")
    await client.close()  # its last row is the socket's close; nothing is audited after it
    everything = await async_wait_for(
        lambda: (lambda rows: rows if rows and rows[-1]["opcode"] == "closed" else None)(relay.audit()), timeout=10,
        what="the closed socket's row last")
    newest = relay.audit("--limit", "4")
    assert [r["id"] for r in newest] == [r["id"] for r in everything[-4:]], (newest, everything[-6:])
    assert [r["id"] for r in newest] == sorted(r["id"] for r in newest), "oldest first"
    text = relay.cli("audit", "--limit", "1").stdout.splitlines()
    assert len(text) == 1 and " ws/closed " in text[0], text
    refused = relay.cli("audit", "--limit", "0", check=False)
    assert refused.returncode == 1 and "--limit" in refused.stderr, refused.stderr
