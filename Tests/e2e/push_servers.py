"""Test doubles for the push services the relay calls, and their pytest fixtures.

- `FakeAPNs` (in `fake_apns.py`, re-exported here): Apple's APNs provider API over HTTP/2 + TLS with
  ES256 provider-token checks and answers chosen by device-token prefix (table in that module).
- `FakeHTTP`: a plain HTTP/1.1 recorder for ntfy and webhooks, with scripted statuses.
- `verify_webhook_signature` / `webhook_signature`: `X-ClawRelay-Timestamp` + `X-ClawRelay-Signature`.

Fixtures (`fake_apns`, `fake_http`) live here, not in conftest.py; a test module imports them, as
the suite already does for `app_decodes_every_frame`:

    from push_servers import fake_apns, fake_http  # noqa: F401  (fixtures)

Everything listens on 127.0.0.1 on an ephemeral port in background threads; the fixtures stop the
servers (joining their threads and closing their sockets) at teardown.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable, Mapping, Union

import pytest

from fake_apns import (  # noqa: F401  (re-exported)
    MAX_PAYLOAD,
    PREFIX_TABLE,
    APNsKey,
    CertBundle,
    FakeAPNs,
    HOST,
    Reply,
    RequestRecorder,
    check_provider_token,
    load_apns_key,
    make_apns_key,
    make_device_token,
    make_tls_certs,
    mint_provider_token,
)

TIMESTAMP_HEADER = "X-ClawRelay-Timestamp"
SIGNATURE_HEADER = "X-ClawRelay-Signature"


# --------------------------------------------------------------------------------------------
# webhook signatures


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else value


def webhook_signature(secret: str | bytes, timestamp: int | str, body: str | bytes) -> str:
    """`sha256=<hex HMAC-SHA256(secret, f"{timestamp}.{body}")>`."""
    mac = hmac.new(_as_bytes(secret), str(timestamp).encode("ascii") + b"." + _as_bytes(body), hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def _header(headers: Mapping[str, str], name: str) -> str | None:
    get = getattr(headers, "get", None)
    value = get(name) if get else None  # case-insensitive already for http.client / email.message headers
    if value is not None:
        return value
    lname = name.lower()
    for key, val in headers.items():
        if key.lower() == lname:
            return val
    return None


def verify_webhook_signature(secret: str | bytes, headers: Mapping[str, str], body: str | bytes,
                             max_skew: float | None = 300, now: float | None = None) -> bool:
    """True if `X-ClawRelay-Signature` is `sha256=<hex HMAC-SHA256(secret, "{ts}.{body}")>` for the
    `X-ClawRelay-Timestamp` header (unix seconds, an integer) and that timestamp is within `max_skew`
    seconds of now (None: no freshness check). Header names are matched case-insensitively."""
    ts = _header(headers, TIMESTAMP_HEADER)
    sig = _header(headers, SIGNATURE_HEADER)
    if ts is None or sig is None or not ts.strip().isdigit():
        return False
    ts = ts.strip()
    if max_skew is not None and abs((time.time() if now is None else now) - int(ts)) > max_skew:
        return False
    expected = webhook_signature(secret, ts, body)
    return hmac.compare_digest(expected.encode("ascii"), sig.strip().encode("utf-8", "replace"))


# --------------------------------------------------------------------------------------------
# FakeHTTP


@dataclass
class HTTPReply:
    """A scripted HTTP answer; `delay` sleeps in the handler thread before answering."""

    status: int = 200
    body: Any = b""  # bytes, str, or a JSON-able value
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


HTTPAnswer = Union[int, HTTPReply]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = True  # server_close() joins the handler threads
    allow_reuse_address = True
    owner: "FakeHTTP"

    def process_request(self, request, client_address):  # before the handler thread starts
        self.owner._track(request, True)
        super().process_request(request, client_address)

    def shutdown_request(self, request):  # in the handler thread, after the handler finished
        self.owner._track(request, False)
        super().shutdown_request(request)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeHTTP/1"
    timeout = 30  # idle keep-alive connections end by themselves; stop() cuts them sooner

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 — quiet
        pass

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _handle(self) -> None:
        body = self._read_body()
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        owner: FakeHTTP = self.server.owner
        reply = owner._next_reply()
        record = {"method": self.command, "path": self.path, "headers": headers, "body": body,
                  "time": time.time(), "status": reply.status}
        owner._record(record)
        if reply.delay:
            time.sleep(reply.delay)
        payload = reply.body
        if not isinstance(payload, (bytes, str)):
            payload = json.dumps(payload)
        payload = _as_bytes(payload)
        self.send_response(reply.status)
        extra = {k.lower(): v for k, v in reply.headers.items()}
        if owner.retry_after is not None and reply.status >= 300 and "retry-after" not in extra:
            self.send_header("Retry-After", str(owner.retry_after))
        if payload and "content-type" not in extra:
            self.send_header("Content-Type", "application/json" if payload[:1] in (b"{", b"[") else "text/plain")
        for k, v in reply.headers.items():
            self.send_header(k, str(v))
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle


class FakeHTTP(RequestRecorder):
    """An HTTP/1.1 recorder. Answers `statuses` in order (ints or `HTTPReply`s), then `default_status`.

    Records dicts `{method, path (with query), headers (lower-case names), body (bytes), time, status}`.
    `retry_after` (seconds or an HTTP date), when set, is sent as `Retry-After` on every non-2xx answer.
    """

    def __init__(self, statuses: Iterable[HTTPAnswer] = (), *, default_status: HTTPAnswer = 200,
                 retry_after: int | str | None = None, port: int = 0):
        super().__init__(port)
        self.default_status = default_status
        self.retry_after = retry_after
        self._script: list[HTTPAnswer] = list(statuses)
        self._open: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- properties (host, port, requests: RequestRecorder)

    @property
    def _name(self) -> str:
        return f"FakeHTTP {self.url}" if self._port else "FakeHTTP"

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def script(self, statuses: Iterable[HTTPAnswer]) -> None:
        """Append answers to the queue (consumed in order before `default_status`)."""
        with self._cond:
            self._script.extend(statuses)

    @property
    def pending_script(self) -> list[HTTPAnswer]:
        with self._cond:
            return list(self._script)

    # -- waiting (wait_for, assert_no_request_within: RequestRecorder)

    def _describe(self, record: dict) -> tuple:
        return (record["method"], record["path"], record["status"], record["body"][:200])

    # -- lifecycle

    def start(self) -> "FakeHTTP":
        if self._server is not None:
            raise RuntimeError("FakeHTTP already started")
        server = _Server((HOST, self._port), _Handler)
        server.owner = self
        self._server = server
        self._port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-http-{self._port}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving, cut keep-alive connections, join every thread. Restartable (same port)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        if self._thread:
            self._thread.join(timeout)
        with self._cond:
            open_socks = list(self._open)
        for sock in open_socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        server.server_close()  # joins handler threads
        self._thread = None

    def __enter__(self) -> "FakeHTTP":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- internals

    def _track(self, sock: socket.socket, opened: bool) -> None:
        with self._cond:
            (self._open.add if opened else self._open.discard)(sock)

    def _next_reply(self) -> HTTPReply:
        with self._cond:
            answer = self._script.pop(0) if self._script else self.default_status
        return answer if isinstance(answer, HTTPReply) else HTTPReply(int(answer))

    def _record(self, record: dict) -> None:
        with self._cond:
            self._records.append(record)
            self._cond.notify_all()


# --------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture
def fake_apns(tmp_path):
    """A started FakeAPNs with a fresh `.p8` key and CA under tmp_path/fake_apns: `key_file`,
    `key_id` ("ABC123DEFG"), `team_id` ("TEAM123456"), `topic` ("com.example.app"), `ca_file`, `endpoint`."""
    server = FakeAPNs(tmp_path / "fake_apns").start()
    yield server
    server.stop()
    if server.errors:
        pytest.fail("FakeAPNs failed internally:\n" + "\n".join(server.errors), pytrace=False)


@pytest.fixture
def fake_http():
    """A factory: `fake_http(statuses=[500, 200], default_status=200, retry_after=None)` -> a started
    FakeHTTP; every one is stopped at teardown."""
    servers: list[FakeHTTP] = []

    def factory(statuses: Iterable[HTTPAnswer] = (), **kwargs: Any) -> FakeHTTP:
        server = FakeHTTP(statuses, **kwargs).start()
        servers.append(server)
        return server

    yield factory
    for server in servers:
        server.stop()
