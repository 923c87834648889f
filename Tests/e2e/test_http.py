"""HTTP on the Clawline port (/version, /ws without upgrade, /upload, /download) and the admin port."""

import json
import os
import re
import uuid

from conftest import (
    assert_http_error,
    pair_and_approve,
    pair_first_admin,
    setup_admin,
    upload,
)

ASSET_RE = re.compile(r"^a_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", re.I)


def test_version_needs_no_auth(relay):
    resp = relay.http("GET", "/version")
    assert resp.status == 200, resp
    assert resp.json() == {"protocolVersion": 1}
    assert resp.headers.get("content-type", "").startswith("application/json"), resp.headers


def test_plain_get_on_ws_is_426(relay):
    resp = relay.http("GET", "/ws")
    assert resp.status == 426, (resp.status, resp.body)


async def test_upload_then_download_round_trip(relay):
    admin = await pair_first_admin(relay)
    content = os.urandom(3000)
    resp = upload(relay, admin.token, content, "image/jpeg")
    assert resp.status == 200, (resp.status, resp.body)
    body = resp.json()
    assert ASSET_RE.match(body.get("assetId", "")), body
    assert body.get("mimeType") == "image/jpeg", body
    assert body.get("size") == len(content), body
    assert resp.headers.get("content-type", "").startswith("application/json"), resp.headers

    down = relay.http("GET", f"/download/{body['assetId']}", headers=admin.bearer)
    assert down.status == 200, (down.status, down.body[:200])
    assert down.body == content
    assert down.headers.get("content-type", "").startswith("image/jpeg"), down.headers


async def test_two_uploads_get_distinct_asset_ids(relay):
    admin = await pair_first_admin(relay)
    first = upload(relay, admin.token, b"one").json()["assetId"]
    second = upload(relay, admin.token, b"one").json()["assetId"]
    assert first != second


async def test_upload_over_limit_is_413(relay_factory):
    relay = relay_factory(clawline={"max_upload_bytes": 1024})
    admin = await pair_first_admin(relay)
    ok = upload(relay, admin.token, b"x" * 1024)
    assert ok.status == 200, (ok.status, ok.body)
    resp = upload(relay, admin.token, b"x" * 4096)
    assert_http_error(resp, 413, "payload_too_large")


async def test_upload_with_wrong_field_name_is_400(relay):
    admin = await pair_first_admin(relay)
    resp = upload(relay, admin.token, b"data", field="attachment")
    assert_http_error(resp, 400, "invalid_message")


async def test_upload_without_multipart_body_is_400(relay):
    admin = await pair_first_admin(relay)
    resp = relay.http("POST", "/upload", body=b"raw bytes",
                      headers={"Content-Type": "application/octet-stream", **admin.bearer})
    assert_http_error(resp, 400, "invalid_message")


async def test_upload_auth_header_missing_or_malformed_is_401(relay):
    admin = await pair_first_admin(relay)
    assert_http_error(upload(relay, None, b"data"), 401, "auth_failed")
    for header in ["", "Bearer", "Bearer ", "Bearer garbage", f"Basic {admin.token}", admin.token]:
        resp = upload(relay, None, b"data", auth_header=header)
        assert_http_error(resp, 401, "auth_failed")


async def test_upload_with_tampered_token_is_401(relay):
    admin = await pair_first_admin(relay)
    head, payload, sig = admin.token.split(".")
    bad_sig = ("A" if sig[0] != "A" else "B") + sig[1:]
    resp = upload(relay, None, b"data", auth_header=f"Bearer {head}.{payload}.{bad_sig}")
    assert_http_error(resp, 401, "auth_failed")


async def test_upload_with_revoked_token_is_403(relay):
    admin, admin_client = await setup_admin(relay)
    other = await pair_and_approve(relay, admin_client)
    await admin_client.close()
    relay.cli("devices", "revoke", other.device_id)
    resp = upload(relay, other.token, b"data")
    assert_http_error(resp, 403, "token_revoked")


async def test_download_requires_auth(relay):
    admin = await pair_first_admin(relay)
    asset = upload(relay, admin.token, b"secret").json()["assetId"]
    assert_http_error(relay.http("GET", f"/download/{asset}"), 401, "auth_failed")
    assert_http_error(relay.http("GET", f"/download/{asset}", headers={"Authorization": "Bearer nope"}), 401, "auth_failed")


async def test_download_unknown_asset_is_404(relay):
    admin = await pair_first_admin(relay)
    resp = relay.http("GET", f"/download/a_{uuid.uuid4()}", headers=admin.bearer)
    assert_http_error(resp, 404, "asset_not_found")


async def test_download_of_another_users_asset_is_404_same_user_is_200(relay):
    admin, admin_client = await setup_admin(relay)
    stranger = await pair_and_approve(relay, admin_client, name="Stranger")  # new userId
    sibling = await pair_and_approve(relay, admin_client, user_id=admin.user_id, name="Sibling")
    await admin_client.close()
    asset = upload(relay, admin.token, b"private bytes", "image/png").json()["assetId"]

    assert_http_error(relay.http("GET", f"/download/{asset}", headers=stranger.bearer), 404, "asset_not_found")
    ok = relay.http("GET", f"/download/{asset}", headers=sibling.bearer)
    assert ok.status == 200 and ok.body == b"private bytes", (ok.status, ok.body[:100])


def test_admin_healthz(relay):
    resp = relay.http("GET", "/healthz", admin=True)
    assert resp.status == 200, (resp.status, resp.body)
    version = relay.cli("--version").stdout.split()[-1]
    body = resp.json()
    assert body["status"] == "ok" and body["version"] == version and isinstance(body["uptimeSeconds"], int), body
    metrics = relay.http("GET", "/metrics", admin=True).body.decode()
    assert f'clawrelay_build_info{{version="{version}"}} 1' in metrics, metrics[:500]


async def test_admin_metrics_are_prometheus_text(relay):
    admin = await pair_first_admin(relay)  # at least one connection and some frames
    resp = relay.http("GET", "/metrics", admin=True)
    assert resp.status == 200, (resp.status, resp.body)
    text = resp.body.decode()
    assert "clawrelay_connections" in text, text[:2000]
    assert "clawrelay_frames_total" in text, text[:2000]
    samples = [l for l in text.splitlines() if l.startswith("clawrelay_frames_total")]
    assert samples, text[:2000]
    assert any(float(l.rsplit(" ", 1)[-1]) > 0 for l in samples), samples


def test_listeners_json_matches_ready_line(relay):
    listeners = json.loads((relay.data_dir / "listeners.json").read_text())
    assert listeners == {"clawline": f"127.0.0.1:{relay.port}", "admin": f"127.0.0.1:{relay.admin_port}"}


async def test_metrics_count_devices_per_presence_state(relay):
    from conftest import setup_admin, wait_for
    _, client = await setup_admin(relay)

    def devices():
        text = relay.http("GET", "/metrics", admin=True).body.decode()
        return {line.split("{")[1].split("}")[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("clawrelay_devices{")}

    assert wait_for(lambda: devices().get('state="foreground"') == 1, what="one foreground device")
    await client.close()
    counts = wait_for(lambda: (d := devices()).get('state="offline"') == 1 and d, what="the device offline")
    assert counts.get('state="foreground"') == 0 and counts.get('state="background"') == 0, counts


def _exchange(port: int, request: bytes) -> tuple[bytes, bool]:
    """Sends one raw request; returns what came back and whether the relay closed the socket
    (False: it was still open 3 s after the answer)."""
    import socket
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(3)
        sock.sendall(request)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except socket.timeout:
            return data, False
        return data, True


def test_connection_close_ends_the_socket_after_the_answer_and_keep_alive_keeps_it(relay):
    closing, closed = _exchange(relay.port, b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert closing.startswith(b"HTTP/1.1 200") and b"connection: close" in closing.lower(), closing
    assert closed, "the relay closes a Connection: close request's socket after its answer"
    kept, closed = _exchange(relay.port, b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
    assert kept.startswith(b"HTTP/1.1 200") and not closed, "HTTP/1.1 keep-alive stays open for the next request"


def metric_samples(relay, name: str) -> dict[str, float]:
    """`name`'s samples on /metrics, by their label set."""
    text = relay.http("GET", "/metrics", admin=True).body.decode()
    samples = {}
    for line in text.splitlines():
        if line.startswith(name + "{"):
            labels, value = line[len(name) + 1 :].rsplit("} ", 1)
            samples[labels] = float(value)
    return samples


async def test_metrics_count_messages_connections_and_pairings_for_every_protocol(relay_factory):
    from conftest import make_config, send_and_complete, setup_admin
    from gateway_client import GatewayClient, Identity, paired

    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    _, clawline = await setup_admin(relay)
    await send_and_complete(clawline, "over clawline")
    operator, _ = await paired(relay, Identity())
    sent = await operator.request("chat.send", {"sessionKey": "main", "message": "over the gateway", "idempotencyKey": "run-1"})
    assert sent["ok"], sent
    await operator.event("chat", where=lambda p: p.get("state") == "final")
    waiting = await GatewayClient.open(relay.listeners["gateway"][1])
    refused = await waiting.connect(Identity())
    assert refused["error"]["code"] == "NOT_PAIRED", refused

    accepted = metric_samples(relay, "clawrelay_messages_accepted_total")
    assert accepted['protocol="clawline"'] == 1 and accepted['protocol="gateway"'] == 1, accepted
    connections = metric_samples(relay, "clawrelay_connections")
    assert connections['protocol="clawline"'] >= 1 and connections['protocol="gateway"'] >= 1, connections
    pending = metric_samples(relay, "clawrelay_pending_pairings")
    assert pending['protocol="gateway"'] == 1 and pending['protocol="clawline"'] == 0, pending


def _answer(port: int, request: bytes) -> bytes:
    """Everything the relay sends back until it closes the socket."""
    data, closed = _exchange(port, request)
    assert closed, f"the relay kept the socket open after {data[:200]!r}"
    return data


def test_head_answers_healthz_and_metrics_like_get_without_the_body(relay):
    for path in ("/healthz", "/metrics"):
        get = relay.http("GET", path, admin=True)
        head = _answer(relay.admin_port, f"HEAD {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        status, _, rest = head.partition(b"\r\n")
        headers, _, body = rest.partition(b"\r\n\r\n")
        fields = dict(line.decode().split(": ", 1) for line in headers.split(b"\r\n"))
        assert status == b"HTTP/1.1 200 OK" and body == b"", head
        assert fields["content-type"] == get.headers["content-type"] and int(fields["content-length"]) > 0, fields
    refused = _answer(relay.admin_port, b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 405 Method Not Allowed\r\n") and b"allow: GET, HEAD\r\n" in refused, refused


def test_every_status_line_has_its_reason_phrase(relay_factory):
    from discoclaw_client import SETUP_TOKEN, discoclaw_config

    cfg = discoclaw_config(max_devices_per_user=1)
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    disco, gateway = relay.listeners["discoclaw"][1], relay.listeners["gateway"][1]

    def post(path: str, fields: dict, bearer: str = "") -> bytes:
        body = json.dumps(fields).encode()
        auth = f"Authorization: Bearer {bearer}\r\n" if bearer else ""
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        return _answer(disco, head.encode() + body)

    created = post("/auth/register", {"name": "phone", "platform": "ios", "setupToken": SETUP_TOKEN})
    token = json.loads(created.split(b"\r\n\r\n", 1)[1])["token"]
    answers = {
        "200 OK": _answer(relay.port, b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        "201 Created": created,
        "401 Unauthorized": post("/auth/register", {"name": "phone", "platform": "ios", "setupToken": "not-the-setup-token"}),
        "404 Not Found": _answer(relay.port, b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        "409 Conflict": post("/auth/devices", {"name": "tablet", "platform": "ios"}, bearer=token),  # max_devices_per_user = 1
        "411 Length Required": _answer(relay.port, b"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        "426 Upgrade Required": _answer(gateway, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    }
    for expected, answer in answers.items():
        assert answer.split(b"\r\n", 1)[0] == f"HTTP/1.1 {expected}".encode(), (expected, answer[:200])
