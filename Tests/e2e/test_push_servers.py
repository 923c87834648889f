"""Self-tests of the push doubles (FakeAPNs, FakeHTTP); no relay binary needed."""

from __future__ import annotations

import base64
import json
import select
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass

import h2.config
import h2.connection
import h2.events
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from push_servers import (  # noqa: F401  (fake_apns, fake_http are fixtures)
    FakeAPNs,
    FakeHTTP,
    HTTPReply,
    Reply,
    fake_apns,
    fake_http,
    make_device_token,
    mint_provider_token,
    verify_webhook_signature,
    webhook_signature,
)

PAYLOAD = {"aps": {"alert": {"title": "hi", "body": "there"}}}


# --------------------------------------------------------------------------------------------
# a small HTTP/2 client (h2 over ssl)


@dataclass
class H2Response:
    status: int
    headers: dict[str, str]
    body: bytes = b""
    ended: bool = False

    def json(self):
        return json.loads(self.body)


@dataclass
class _Out:
    data: bytearray
    done: bool = False


class H2Client:
    def __init__(self, fake: FakeAPNs, alpn: tuple[str, ...] = ("h2",), ca_file=None):
        ctx = ssl.create_default_context(cafile=str(ca_file or fake.ca_file))
        ctx.set_alpn_protocols(list(alpn))
        raw = socket.create_connection((fake.host, fake.port), timeout=10)
        self.sock = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
        assert self.sock.selected_alpn_protocol() == "h2"
        self.fake = fake
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.responses: dict[int, H2Response] = {}
        self.outgoing: dict[int, _Out] = {}
        self.goaway: h2.events.ConnectionTerminated | None = None
        self._flush()

    def _flush(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def jwt(self, key=None, **kw) -> str:
        return mint_provider_token(key or self.fake.key.private_key, kw.pop("key_id", self.fake.key_id),
                                   kw.pop("team_id", self.fake.team_id), **kw)

    def send(self, token: str | None = None, body=PAYLOAD, *, path: str | None = None, method: str = "POST",
             jwt: str | None = "mint", headers: dict | None = None, topic: str | None = "fake",
             push_type: str | None = "alert") -> int:
        sid = self.conn.get_next_available_stream_id()
        hdrs = [(":method", method), (":scheme", "https"), (":authority", f"127.0.0.1:{self.fake.port}"),
                (":path", path if path is not None else f"/3/device/{token}")]
        if jwt == "mint":
            jwt = self.jwt()
        if jwt is not None:
            hdrs.append(("authorization", f"bearer {jwt}"))
        if topic is not None:
            hdrs.append(("apns-topic", self.fake.topic if topic == "fake" else topic))
        if push_type is not None:
            hdrs.append(("apns-push-type", push_type))
        hdrs += list((headers or {}).items())
        raw = body if isinstance(body, bytes) else (b"" if body is None else json.dumps(body).encode())
        self.conn.send_headers(sid, hdrs, end_stream=not raw)
        self.responses[sid] = H2Response(0, {})
        if raw:
            self.outgoing[sid] = _Out(bytearray(raw))
            self._pump_out()
        self._flush()
        return sid

    def _pump_out(self) -> None:
        for sid, out in list(self.outgoing.items()):
            while out.data:
                n = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size, len(out.data))
                if n <= 0:
                    break
                chunk = bytes(out.data[:n])
                del out.data[:n]
                self.conn.send_data(sid, chunk, end_stream=not out.data)
            if not out.data:
                del self.outgoing[sid]

    def read(self, timeout: float = 10.0) -> None:
        readable, _, _ = select.select([self.sock], [], [], timeout)
        assert readable or self.sock.pending(), "no data from FakeAPNs"
        try:
            data = self.sock.recv(65536)
        except (ssl.SSLError, OSError) as exc:
            raise ConnectionError(f"FakeAPNs closed the connection: {exc}") from exc
        if not data:
            raise ConnectionError("FakeAPNs closed the connection")
        for ev in self.conn.receive_data(data):
            if isinstance(ev, h2.events.ResponseReceived):
                hdrs = dict(ev.headers)
                self.responses[ev.stream_id] = H2Response(int(hdrs[":status"]), hdrs)
            elif isinstance(ev, h2.events.DataReceived):
                self.responses[ev.stream_id].body += ev.data
                self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                self.responses[ev.stream_id].ended = True
            elif isinstance(ev, h2.events.WindowUpdated):
                self._pump_out()
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.goaway = ev
        try:
            self._flush()
        except (ssl.SSLError, OSError) as exc:
            raise ConnectionError(f"FakeAPNs closed the connection: {exc}") from exc

    def wait(self, *sids: int, timeout: float = 10.0) -> list[H2Response]:
        deadline = time.monotonic() + timeout
        while not all(self.responses[s].ended for s in sids):
            assert time.monotonic() < deadline, "FakeAPNs did not answer in time"
            self.read(deadline - time.monotonic())
        return [self.responses[s] for s in sids]

    def request(self, *args, **kw) -> H2Response:
        return self.wait(self.send(*args, **kw))[0]

    def close(self) -> None:
        try:
            self.conn.close_connection()
            self._flush()
        except Exception:
            pass
        self.sock.close()


@pytest.fixture
def h2_client(fake_apns):
    clients: list[H2Client] = []

    def factory(**kw) -> H2Client:
        c = H2Client(fake_apns, **kw)
        clients.append(c)
        return c

    yield factory
    for c in clients:
        c.close()


# --------------------------------------------------------------------------------------------
# FakeAPNs


def test_fixture_attributes(fake_apns):
    assert fake_apns.key_id == "ABC123DEFG" and fake_apns.team_id == "TEAM123456"
    assert fake_apns.topic == "com.example.app"
    assert fake_apns.endpoint == f"https://127.0.0.1:{fake_apns.port}"
    assert fake_apns.key_file.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert fake_apns.ca_file.read_text().startswith("-----BEGIN CERTIFICATE-----")


def test_valid_jwt_is_accepted_and_recorded(fake_apns, h2_client):
    client = h2_client()
    token = make_device_token()
    apns_id = str(uuid.uuid4()).upper()
    jwt = client.jwt()
    resp = client.request(token, jwt=jwt, headers={"apns-id": apns_id, "apns-priority": "10", "apns-expiration": "0",
                                                   "apns-collapse-id": "é" * 32})
    assert resp.status == 200 and resp.body == b""
    assert resp.headers["apns-id"] == apns_id
    [rec] = fake_apns.wait_for(1)
    assert rec["path"] == f"/3/device/{token}" and rec["token"] == token and rec["method"] == "POST"
    assert rec["body"] == PAYLOAD and rec["jwt"] == jwt and rec["status"] == 200 and rec["reason"] is None
    assert rec["headers"]["apns-topic"] == "com.example.app" and rec["headers"]["apns-priority"] == "10"
    assert rec["headers"]["apns-push-type"] == "alert"
    assert fake_apns.jwts == [jwt]
    resp2 = client.request(make_device_token(), jwt=jwt)
    assert resp2.status == 200 and resp2.headers["apns-id"]  # made up when the request has none
    assert fake_apns.jwts == [jwt]  # distinct tokens only


def test_jwt_problems(fake_apns, h2_client):
    client = h2_client()
    token = make_device_token()
    other = ec.generate_private_key(ec.SECP256R1())
    cases = {
        "other key": (client.jwt(key=other), "InvalidProviderToken"),
        "wrong kid": (client.jwt(key_id="ZZZ999ZZZZ"), "InvalidProviderToken"),
        "wrong team": (client.jwt(team_id="OTHERTEAM1"), "InvalidProviderToken"),
        "float iat": (client.jwt(claims={"iss": fake_apns.team_id, "iat": time.time()}), "InvalidProviderToken"),
        "HS256": (client.jwt(header={"alg": "HS256", "kid": fake_apns.key_id}), "InvalidProviderToken"),
        "garbage": ("not.a.jwt", "InvalidProviderToken"),
        "old iat": (client.jwt(iat=int(time.time()) - 3700), "ExpiredProviderToken"),
        "future iat": (client.jwt(iat=int(time.time()) + 3700), "InvalidProviderToken"),
    }
    for name, (jwt, reason) in cases.items():
        resp = client.request(token, jwt=jwt)
        assert (resp.status, resp.json()) == (403, {"reason": reason}), name
    # a DER signature instead of JWS raw r||s
    good = client.jwt()
    head, claims, _ = good.split(".")
    from cryptography.hazmat.primitives import hashes
    der = fake_apns.key.private_key.sign(f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    der_jwt = f"{head}.{claims}." + base64.urlsafe_b64encode(der).rstrip(b"=").decode()
    assert client.request(token, jwt=der_jwt).json() == {"reason": "InvalidProviderToken"}
    resp = client.request(token, jwt=None)
    assert (resp.status, resp.json()) == (403, {"reason": "MissingProviderToken"})
    assert client.request(token, jwt=None, headers={"authorization": f"Basic {good}"}).json()["reason"] == "InvalidProviderToken"
    assert client.request(token, jwt=None, headers={"authorization": f"Bearer {good}"}).status == 200
    assert all(r["status"] == 403 for r in fake_apns.requests[:-1]) and fake_apns.requests[-1]["status"] == 200


@pytest.mark.parametrize("prefix,status,reason", [
    ("ba", 400, "BadDeviceToken"),
    ("41", 410, "Unregistered"),
    ("42", 429, "TooManyRequests"),
    ("50", 500, "InternalServerError"),
    ("53", 503, "ServiceUnavailable"),
    ("dd", 400, "DeviceTokenNotForTopic"),
    ("13", 200, None),  # small body
    ("ab", 200, None),
])
def test_prefixes(fake_apns, h2_client, prefix, status, reason):
    token = make_device_token(prefix)
    assert token.startswith(prefix) and len(token) == 64
    before = int(time.time() * 1000)
    resp = h2_client().request(token)
    assert resp.status == status, resp.body
    assert "apns-id" in resp.headers
    if reason is None:
        assert resp.body == b""
        return
    assert resp.headers["content-type"] == "application/json"
    body = resp.json()
    assert body["reason"] == reason
    if prefix == "41":
        assert isinstance(body["timestamp"], int) and before <= body["timestamp"] <= int(time.time() * 1000)
    else:
        assert set(body) == {"reason"}
    assert fake_apns.requests[0]["status"] == status and fake_apns.requests[0]["reason"] == reason


def test_unregistered_timestamp_configurable_and_uppercase_token(fake_apns, h2_client):
    token = make_device_token("41")
    fake_apns.unregistered_timestamps[token] = 1700000000000
    resp = h2_client().request(token.upper())
    assert (resp.status, resp.json()) == (410, {"reason": "Unregistered", "timestamp": 1700000000000})


def test_prefix_13_payload_limit(fake_apns, h2_client):
    client = h2_client()
    token = make_device_token("13")
    assert client.request(token, {"aps": {}, "pad": "x" * 2100}).status == 413
    assert client.request(token, {"aps": {}, "pad": "x" * 1900}).status == 200


def test_expired_provider_token_then_reminted_jwt(fake_apns, h2_client):
    client = h2_client()
    token = make_device_token("e0")
    first = client.jwt()
    resp = client.request(token, jwt=first)
    assert (resp.status, resp.json()) == (403, {"reason": "ExpiredProviderToken"})
    # the rejected JWT stays expired, for any device token
    assert client.request(token, jwt=first).json() == {"reason": "ExpiredProviderToken"}
    assert client.request(make_device_token(), jwt=first).json() == {"reason": "ExpiredProviderToken"}
    second = client.jwt()
    assert second != first
    assert client.request(token, jwt=second).status == 200
    assert fake_apns.jwts == [first, second]


def test_expired_provider_token_without_jwt_expiry(fake_apns, h2_client):
    fake_apns.expire_rejected_jwt = False
    client = h2_client()
    token = make_device_token("e0")
    jwt = client.jwt()
    assert client.request(token, jwt=jwt).status == 403
    assert client.request(token, jwt=jwt).status == 200


def test_payload_limit_4096(fake_apns, h2_client):
    client = h2_client()
    token = make_device_token()
    base = len(json.dumps({"aps": {}, "p": ""}).encode())
    exact = json.dumps({"aps": {}, "p": "x" * (4096 - base)}).encode()
    over = json.dumps({"aps": {}, "p": "x" * (4097 - base)}).encode()
    assert len(exact) == 4096 and len(over) == 4097
    assert client.request(token, exact).status == 200
    resp = client.request(token, over)
    assert (resp.status, resp.json()) == (413, {"reason": "PayloadTooLarge"})
    assert fake_apns.requests[-1]["raw"] == over


def test_path_method_and_header_checks(fake_apns, h2_client):
    client = h2_client()
    token = make_device_token()
    cases = [
        (dict(path="/3/devices/" + token), 404, "BadPath"),
        (dict(path="/"), 404, "BadPath"),
        (dict(method="GET", body=None), 405, "MethodNotAllowed"),
        (dict(topic=None), 400, "MissingTopic"),
        (dict(topic="com.example.other"), 400, "DeviceTokenNotForTopic"),
        (dict(push_type=None), 400, "InvalidPushType"),
        (dict(push_type="nonsense"), 400, "InvalidPushType"),
        (dict(headers={"apns-id": "not-a-uuid"}), 400, "BadMessageId"),
        (dict(headers={"apns-priority": "7"}), 400, "BadPriority"),
        (dict(headers={"apns-expiration": "soon"}), 400, "BadExpirationDate"),
        (dict(headers={"apns-collapse-id": "é" * 33}), 400, "BadCollapseId"),
        (dict(body=None), 400, "PayloadEmpty"),
        (dict(body=b"not json"), 400, "BadPayload"),
        (dict(path="/3/device/"), 400, "MissingDeviceToken"),
        (dict(path="/3/device/xyz"), 400, "BadDeviceToken"),
    ]
    for kw, status, reason in cases:
        kw.setdefault("token", token)
        resp = client.request(**kw)
        assert (resp.status, resp.json()) == (status, {"reason": reason}), kw


def test_overrides_dict_and_callable(fake_apns, h2_client):
    client = h2_client()
    a, b = make_device_token(), make_device_token("ba")
    fake_apns.overrides = {a: (503, "Shutdown"), b: 200}
    resp = client.request(a)
    assert (resp.status, resp.json()) == (503, {"reason": "Shutdown"})
    assert client.request(b).status == 200
    calls = []

    def answer(rec):
        calls.append(rec["token"])
        return Reply(429, "TooManyRequests") if len(calls) == 1 else None  # then fall through

    fake_apns.overrides = answer
    assert client.request(a).status == 429
    assert client.request(a).status == 200
    assert client.request(b).status == 400
    assert calls == [a, a, b]


def test_delayed_reply_does_not_block_other_streams(fake_apns, h2_client):
    client = h2_client()
    slow, fast = make_device_token(), make_device_token()
    fake_apns.overrides = {slow: Reply(200, delay=1.0)}
    s1 = client.send(slow)
    s2 = client.send(fast)
    t0 = time.monotonic()
    client.wait(s2)
    assert time.monotonic() - t0 < 0.8 and not client.responses[s1].ended
    client.wait(s1)


def test_connections_counted_and_streams_multiplexed(fake_apns, h2_client):
    client = h2_client()
    sids = [client.send(make_device_token(), {"aps": {}, "pad": "x" * 2000}) for _ in range(60)]  # > 64 KiB window
    assert [r.status for r in client.wait(*sids)] == [200] * 60
    assert fake_apns.connections == 1
    assert {r["connection"] for r in fake_apns.requests} == {1}
    assert len({r["stream_id"] for r in fake_apns.requests}) == 60
    a, b = client.send(make_device_token()), client.send(make_device_token())
    client.wait(a, b)
    assert fake_apns.connections == 1
    h2_client().request(make_device_token())
    assert fake_apns.connections == 2
    assert fake_apns.requests[-1]["connection"] == 2


def test_tls_requires_h2_and_the_ca(fake_apns, tmp_path):
    ctx = ssl.create_default_context(cafile=str(fake_apns.ca_file))
    ctx.set_alpn_protocols(["http/1.1"])
    with socket.create_connection((fake_apns.host, fake_apns.port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            assert tls.selected_alpn_protocol() is None
            try:
                assert tls.recv(1) == b""  # dropped
            except (ConnectionResetError, ssl.SSLError):
                pass
    with pytest.raises(ssl.SSLCertVerificationError):
        with socket.create_connection((fake_apns.host, fake_apns.port), timeout=5) as raw:
            ssl.create_default_context().wrap_socket(raw, server_hostname="127.0.0.1")
    deadline = time.monotonic() + 5
    while len(fake_apns.tls_errors) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(fake_apns.tls_errors) == 2, fake_apns.tls_errors
    assert fake_apns.requests == []


def test_wait_for_and_negative_check(fake_apns, h2_client):
    with pytest.raises(AssertionError, match="expected at least 1 request"):
        fake_apns.wait_for(1, timeout=0.2)
    fake_apns.assert_no_request_within(0.2)
    client = h2_client()
    since = len(fake_apns.requests)
    client.request(make_device_token())
    with pytest.raises(AssertionError, match="expected no request"):
        fake_apns.assert_no_request_within(0.1, since=since)
    assert len(fake_apns.wait_for(1, timeout=1)) == 1


def test_goaway_on_close_and_stop_and_restart(tmp_path):
    fake = FakeAPNs(tmp_path / "apns").start()
    try:
        client = H2Client(fake)
        assert client.request(make_device_token()).status == 200
        fake.close_connections()
        with pytest.raises(ConnectionError):
            for _ in range(50):
                client.read(timeout=2)
        assert client.goaway is not None and json.loads(client.goaway.additional_data) == {"reason": "Shutdown"}
        client.close()
        port = fake.port
        client = H2Client(fake)  # still listening
        fake.stop()
        with pytest.raises(ConnectionError):
            for _ in range(50):
                client.read(timeout=2)
        assert client.goaway is not None
        client.close()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        fake.start()
        assert fake.port == port
        client = H2Client(fake)
        assert client.request(make_device_token()).status == 200
        client.close()
        assert fake.connections == 3
    finally:
        fake.stop()
    assert not [t for t in threading.enumerate() if t.name.startswith("fake-apns")]
    assert fake.errors == []


def test_stop_with_an_idle_client_does_not_hang(tmp_path):
    fake = FakeAPNs(tmp_path / "apns").start()
    raw = socket.create_connection(("127.0.0.1", fake.port))  # never does the TLS handshake
    t0 = time.monotonic()
    fake.stop()
    assert time.monotonic() - t0 < 4
    raw.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("fake-apns")]


# --------------------------------------------------------------------------------------------
# FakeHTTP and webhook signatures


def _post(url: str, body: bytes = b"{}", headers: dict | None = None) -> tuple[int, dict, bytes]:
    req = urllib.request.Request(url, data=body, headers=headers or {}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_fake_http_scripted_statuses(fake_http):
    server = fake_http([500, 500, 200], default_status=202)
    assert server.url == f"http://127.0.0.1:{server.port}"
    got = [_post(server.url + f"/topic?n={i}", f"msg {i}".encode(), {"Title": "T"})[0] for i in range(5)]
    assert got == [500, 500, 200, 202, 202]
    reqs = server.wait_for(5)
    assert [r["status"] for r in reqs] == got
    assert reqs[0]["method"] == "POST" and reqs[0]["path"] == "/topic?n=0" and reqs[0]["body"] == b"msg 0"
    assert reqs[0]["headers"]["title"] == "T"
    server.script([HTTPReply(429, {"error": "slow down"}, {"X-Extra": "1"})])
    status, headers, body = _post(server.url)
    assert status == 429 and json.loads(body) == {"error": "slow down"} and headers["X-Extra"] == "1"


def test_fake_http_retry_after_and_waiting(fake_http):
    server = fake_http([503], retry_after=7)
    with pytest.raises(AssertionError, match="expected at least 1 request"):
        server.wait_for(1, timeout=0.2)
    status, headers, _ = _post(server.url)
    assert status == 503 and headers["Retry-After"] == "7"
    status, headers, _ = _post(server.url)
    assert status == 200 and "Retry-After" not in headers
    server.assert_no_request_within(0.1)
    since = len(server.requests)
    _post(server.url)
    with pytest.raises(AssertionError, match="expected no request"):
        server.assert_no_request_within(0.1, since=since)


def test_fake_http_keepalive_and_chunked_then_clean_stop():
    import http.client
    server = FakeHTTP().start()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("POST", "/a", body=b"one")
    assert conn.getresponse().read() == b""
    conn.request("PUT", "/b", body=iter([b"tw", b"o"]), encode_chunked=True)  # chunked, same socket
    assert conn.getresponse().status == 200
    assert [(r["method"], r["body"]) for r in server.wait_for(2)] == [("POST", b"one"), ("PUT", b"two")]
    t0 = time.monotonic()
    server.stop()  # the idle keep-alive connection is cut, not waited for
    assert time.monotonic() - t0 < 3
    conn.close()
    assert not [t for t in threading.enumerate() if t.name.startswith(f"fake-http-{server.port}")]


def test_webhook_signature():
    secret = "s3cret"
    body = b'{"event":"message"}'
    ts = int(time.time())
    headers = {"X-ClawRelay-Timestamp": str(ts), "X-ClawRelay-Signature": webhook_signature(secret, ts, body)}
    import hashlib
    import hmac
    assert headers["X-ClawRelay-Signature"] == "sha256=" + hmac.new(b"s3cret", f"{ts}.".encode() + body, hashlib.sha256).hexdigest()
    assert verify_webhook_signature(secret, headers, body)
    assert verify_webhook_signature(secret, {k.lower(): v for k, v in headers.items()}, body.decode())
    assert not verify_webhook_signature("other", headers, body)
    assert not verify_webhook_signature(secret, headers, body + b" ")
    assert not verify_webhook_signature(secret, {"X-ClawRelay-Timestamp": str(ts)}, body)
    assert not verify_webhook_signature(secret, {**headers, "X-ClawRelay-Timestamp": str(ts + 1)}, body)
    old = ts - 3600
    stale = {"X-ClawRelay-Timestamp": str(old), "X-ClawRelay-Signature": webhook_signature(secret, old, body)}
    assert not verify_webhook_signature(secret, stale, body)
    assert verify_webhook_signature(secret, stale, body, max_skew=None)
    ms = {"X-ClawRelay-Timestamp": str(ts * 1000), "X-ClawRelay-Signature": webhook_signature(secret, ts * 1000, body)}
    assert not verify_webhook_signature(secret, ms, body)  # milliseconds are not unix seconds


def test_webhook_signature_over_fake_http(fake_http):
    server = fake_http()
    body = b'{"hello":1}'
    ts = int(time.time())
    _post(server.url + "/hook", body, {"X-ClawRelay-Timestamp": str(ts),
                                       "X-ClawRelay-Signature": webhook_signature("k", ts, body)})
    [rec] = server.wait_for(1)
    assert verify_webhook_signature("k", rec["headers"], rec["body"])
