"""FakeAPNs: a stand-in for Apple's APNs provider API (HTTP/2 over TLS, token auth), for tests.

It listens on 127.0.0.1 on an ephemeral port, in background threads of the pytest process:
TLS 1.2+ with ALPN `h2` only (a client that does not negotiate h2 is dropped), a server certificate
for `127.0.0.1`/`localhost` signed by a throwaway CA made with the `openssl` CLI (`ca_file` is what
the relay is given as `apns_ca_file`), one thread per connection, many concurrent streams per
connection, flow control, GOAWAY on stop.

Every request is checked in this order (the first failing check answers):

| check | answer |
|---|---|
| path is not `/3/device/<token>` | 404 `{"reason":"BadPath"}` |
| method is not POST | 405 `{"reason":"MethodNotAllowed"}` |
| no `authorization: bearer <JWT>` | 403 `{"reason":"MissingProviderToken"}` |
| JWT not ES256 / wrong `kid` / wrong `iss` / `iat` not an int / bad signature (raw r‖s, 64 bytes) / `iat` more than an hour in the future | 403 `{"reason":"InvalidProviderToken"}` |
| `iat` more than an hour old, or a JWT this server already answered `ExpiredProviderToken` to | 403 `{"reason":"ExpiredProviderToken"}` |
| empty token / token not hex | 400 `MissingDeviceToken` / 400 `BadDeviceToken` |
| no `apns-topic` / `apns-topic` != `topic` | 400 `MissingTopic` / 400 `DeviceTokenNotForTopic` |
| no `apns-push-type` or not one of Apple's values | 400 `{"reason":"InvalidPushType"}` |
| `apns-id` not a UUID / `apns-priority` not 1, 5 or 10 / `apns-expiration` not digits / `apns-collapse-id` over 64 bytes | 400 `BadMessageId` / `BadPriority` / `BadExpirationDate` / `BadCollapseId` |
| body > 4096 bytes (`max_payload`) | 413 `{"reason":"PayloadTooLarge"}` |
| empty body / body not a JSON object | 400 `PayloadEmpty` / 400 `BadPayload` (the latter is this double's own word) |
| `overrides` (a dict token → answer, or a callable record → answer or None) | that answer |
| the device token's prefix (below) | the table's answer |
| anything else | 200, header `apns-id` (the request's `apns-id`, else a new UUID) |

Device-token prefixes (tokens are hex, compared in lower case):

| prefix | answer |
|---|---|
| `ba` | 400 `{"reason":"BadDeviceToken"}` |
| `41` | 410 `{"reason":"Unregistered","timestamp":<ms>}`; ms from `unregistered_timestamps[token]`, else now |
| `42` | 429 `{"reason":"TooManyRequests"}` |
| `50` | 500 `{"reason":"InternalServerError"}` |
| `53` | 503 `{"reason":"ServiceUnavailable"}` |
| `e0` | 403 `{"reason":"ExpiredProviderToken"}` the first time this device token is seen, then as usual; the JWT that got the 403 stays expired (later requests carrying it get 403 `ExpiredProviderToken` too), so only a retry with a re-minted JWT succeeds; set `expire_rejected_jwt = False` to turn that off |
| `13` | 413 `{"reason":"PayloadTooLarge"}` when the body is > 2048 bytes, else 200 |
| `dd` | 400 `{"reason":"DeviceTokenNotForTopic"}` |

Random hex tokens start with one of these prefixes about 3% of the time: make tokens meant to
succeed with `make_device_token()`, which avoids them.

Every response carries `apns-id`; error responses carry a JSON body and `content-type: application/json`.
Each request is recorded as a dict: `method, path, token, headers` (lower-case names, pseudo-headers
included), `body` (parsed JSON or None), `raw` (bytes), `jwt`, `status, reason, time` (time.time()),
`connection` (1-based index of the TCP connection) and `stream_id`.
"""

from __future__ import annotations

import base64
import heapq
import itertools
import json
import re
import secrets
import select
import socket
import ssl
import subprocess
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Union

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

HOST = "127.0.0.1"
MAX_PAYLOAD = 4096
PREFIX_13_LIMIT = 2048
JWT_MAX_AGE = 3600
PUSH_TYPES = frozenset({"alert", "background", "location", "voip", "complication", "fileprovider",
                        "mdm", "liveactivity", "pushtotalk", "widgets", "controls"})
DEVICE_PATH_RE = re.compile(r"^/3/device/([^/?#]*)$")
HEX_RE = re.compile(r"^[0-9a-fA-F]+$")
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# prefix -> (status, reason); "e0" and "13" are conditional, see _prefix_answer
PREFIX_TABLE: dict[str, tuple[int, str]] = {
    "ba": (400, "BadDeviceToken"),
    "41": (410, "Unregistered"),
    "42": (429, "TooManyRequests"),
    "50": (500, "InternalServerError"),
    "53": (503, "ServiceUnavailable"),
    "e0": (403, "ExpiredProviderToken"),
    "13": (413, "PayloadTooLarge"),
    "dd": (400, "DeviceTokenNotForTopic"),
}
_SOCKET_ERRORS = (OSError, ssl.SSLError, EOFError)


# --------------------------------------------------------------------------------------------
# certificates (openssl CLI) and the provider key


@dataclass(frozen=True)
class CertBundle:
    ca_file: Path  # the CA certificate (PEM) a client trusts
    ca_key: Path
    cert_file: Path  # the server certificate (PEM), SAN IP:127.0.0.1, DNS:localhost
    key_file: Path


def _openssl(args: list[str], cwd: Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")


def make_tls_certs(directory: Path | str, days: int = 7) -> CertBundle:
    """A throwaway CA (EC P-256 key + self-signed cert) and a server cert for 127.0.0.1/localhost."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    (d / "ca.cnf").write_text(
        "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = ClawRelay Test CA\n"
        "[v3_ca]\nbasicConstraints = critical, CA:TRUE\nkeyUsage = critical, keyCertSign, cRLSign\n"
        "subjectKeyIdentifier = hash\n"
    )
    (d / "server.cnf").write_text(
        "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = localhost\n"
        "[v3_srv]\nbasicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature, keyEncipherment\n"
        "extendedKeyUsage = serverAuth\nsubjectAltName = IP:127.0.0.1, DNS:localhost\n"
        "subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid\n"
    )
    _openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key"], d)
    _openssl(["req", "-new", "-x509", "-config", "ca.cnf", "-extensions", "v3_ca", "-key", "ca.key",
              "-sha256", "-days", str(days), "-out", "ca.pem"], d)
    _openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "server.key"], d)
    _openssl(["req", "-new", "-config", "server.cnf", "-key", "server.key", "-sha256", "-out", "server.csr"], d)
    _openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
              "-set_serial", str(secrets.randbits(63)), "-days", str(days), "-sha256",
              "-extfile", "server.cnf", "-extensions", "v3_srv", "-out", "server.pem"], d)
    return CertBundle(ca_file=d / "ca.pem", ca_key=d / "ca.key", cert_file=d / "server.pem", key_file=d / "server.key")


@dataclass(frozen=True)
class APNsKey:
    key_file: Path  # PKCS#8 PEM, `-----BEGIN PRIVATE KEY-----`, as Apple issues the .p8
    private_key: ec.EllipticCurvePrivateKey
    public_key: ec.EllipticCurvePublicKey


def make_apns_key(path: Path | str) -> APNsKey:
    """Write a fresh EC P-256 key as Apple's `.p8` (PKCS#8 PEM, unencrypted)."""
    key = ec.generate_private_key(ec.SECP256R1())
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    p.chmod(0o600)
    return APNsKey(p, key, key.public_key())


def load_apns_key(path: Path | str) -> APNsKey:
    p = Path(path)
    key = serialization.load_pem_private_key(p.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise ValueError(f"{p} is not an EC P-256 private key")
    return APNsKey(p, key, key.public_key())


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(part: str) -> bytes:
    if not re.fullmatch(r"[A-Za-z0-9_-]*", part):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def mint_provider_token(private_key: ec.EllipticCurvePrivateKey, key_id: str, team_id: str,
                        iat: int | None = None, header: dict | None = None, claims: dict | None = None) -> str:
    """An APNs provider JWT as Apple specifies it (ES256, raw r‖s signature). For tests."""
    h = {"alg": "ES256", "kid": key_id} if header is None else header
    c = {"iss": team_id, "iat": int(time.time()) if iat is None else iat} if claims is None else claims
    signing_input = _b64url(json.dumps(h, separators=(",", ":")).encode()) + "." + \
        _b64url(json.dumps(c, separators=(",", ":")).encode())
    r, s = decode_dss_signature(private_key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def check_provider_token(token: str, public_key: ec.EllipticCurvePublicKey, key_id: str, team_id: str,
                         now: float | None = None, max_age: int = JWT_MAX_AGE) -> str | None:
    """None if the JWT is valid, else the APNs reason (`InvalidProviderToken`/`ExpiredProviderToken`)."""
    try:
        parts = token.split(".")
        if len(parts) != 3:
            return "InvalidProviderToken"
        header = json.loads(_b64url_decode(parts[0]))
        claims = json.loads(_b64url_decode(parts[1]))
        sig = _b64url_decode(parts[2])
    except (ValueError, UnicodeDecodeError):
        return "InvalidProviderToken"
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return "InvalidProviderToken"
    if header.get("alg") != "ES256" or header.get("kid") != key_id:
        return "InvalidProviderToken"
    if claims.get("iss") != team_id:
        return "InvalidProviderToken"
    iat = claims.get("iat")
    if not isinstance(iat, int) or isinstance(iat, bool):
        return "InvalidProviderToken"
    if len(sig) != 64:
        return "InvalidProviderToken"
    der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
    try:
        public_key.verify(der, (parts[0] + "." + parts[1]).encode("ascii"), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return "InvalidProviderToken"
    now = time.time() if now is None else now
    if iat > now + max_age:
        return "InvalidProviderToken"
    if iat < now - max_age:
        return "ExpiredProviderToken"
    return None


def make_device_token(prefix: str = "", nbytes: int = 32) -> str:
    """A hex device token starting with `prefix`; with no special prefix given, it avoids the table's."""
    prefix = prefix.lower()
    while True:
        token = (prefix + secrets.token_hex(nbytes))[: max(nbytes * 2, len(prefix))]
        if prefix[:2] in PREFIX_TABLE or token[:2] not in PREFIX_TABLE:
            return token


# --------------------------------------------------------------------------------------------
# answers


@dataclass
class Reply:
    """An answer. `reason` makes the JSON body `{"reason": ...}` (plus `timestamp` for 410s);
    `body` (bytes or a JSON-able value) replaces it; `delay` holds the response back (the connection
    keeps serving other streams meanwhile)."""

    status: int = 200
    reason: str | None = None
    timestamp: int | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


Answer = Union[Reply, int, tuple]
Overrides = Union[dict, Callable[[dict], Union[Answer, None]]]


def _as_reply(answer: Answer) -> Reply:
    if isinstance(answer, Reply):
        return answer
    if isinstance(answer, int):
        return Reply(answer)
    if isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], int):
        status, second = answer
        return Reply(status, reason=second) if isinstance(second, str) else Reply(status, body=second)
    raise TypeError(f"an answer is a Reply, a status or (status, reason|body), not {answer!r}")


def _reply_body(reply: Reply) -> bytes:
    if reply.body is not None:
        return reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body, separators=(",", ":")).encode()
    if reply.reason is None:
        return b""
    body: dict[str, Any] = {"reason": reply.reason}
    if reply.timestamp is not None:
        body["timestamp"] = reply.timestamp
    return json.dumps(body, separators=(",", ":")).encode()


# --------------------------------------------------------------------------------------------
# the server


class _Conn:
    def __init__(self, index: int, sock: socket.socket):
        self.index = index
        self.sock = sock
        self.thread: threading.Thread | None = None
        self.goaway: tuple[int, bytes] | None = None  # requested by close_connections()


class RequestRecorder:
    """What both push doubles share: the address they listen on, the requests they recorded (under
    `_cond`), and waiting for requests, or for none. Subclasses set `_name` and may override
    `_describe` (one record, for failure messages) and `_context` (extra state for a timeout)."""

    _name = "server"

    def __init__(self, port: int = 0):
        self._port = port
        self._cond = threading.Condition(threading.RLock())
        self._records: list[dict] = []

    @property
    def host(self) -> str:
        return HOST

    @property
    def port(self) -> int:
        if not self._port:
            raise RuntimeError(f"{self._name} is not started")
        return self._port

    @property
    def requests(self) -> list[dict]:
        with self._cond:
            return list(self._records)

    def _describe(self, record: dict) -> Any:
        return record

    def _context(self) -> str:
        return ""

    def wait_for(self, count: int = 1, timeout: float = 10.0) -> list[dict]:
        """Block until at least `count` requests were recorded; return all of them."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._records) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"{self._name}: expected at least {count} request(s) within {timeout}s, got {len(self._records)}: "
                        f"{[self._describe(r) for r in self._records]}{self._context()}")
                self._cond.wait(left)
            return list(self._records)

    def assert_no_request_within(self, seconds: float, since: int | None = None) -> None:
        """Sleep `seconds`; fail if more than `since` requests are recorded by then
        (default: as many as now; pass `len(fake.requests)` taken before the action to close the race)."""
        base = len(self.requests) if since is None else since
        time.sleep(seconds)
        extra = self.requests[base:]
        if extra:
            raise AssertionError(f"{self._name}: expected no request within {seconds}s, got {[self._describe(r) for r in extra]}")


class FakeAPNs(RequestRecorder):
    """The APNs double. `FakeAPNs(directory).start()`; `stop()` (or use it as a context manager)."""

    _name = "FakeAPNs"

    def __init__(
        self,
        directory: Path | str,
        *,
        key_id: str = "ABC123DEFG",
        team_id: str = "TEAM123456",
        topic: str = "com.example.app",
        key_file: Path | str | None = None,
        certs: CertBundle | None = None,
        overrides: Overrides | None = None,
        unregistered_timestamps: dict[str, int] | None = None,
        max_payload: int = MAX_PAYLOAD,
        max_concurrent_streams: int = 1000,
        expire_rejected_jwt: bool = True,
        port: int = 0,
    ):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.key_id = key_id
        self.team_id = team_id
        self.topic = topic
        self.key = load_apns_key(key_file) if key_file else make_apns_key(self.directory / f"AuthKey_{key_id}.p8")
        self.certs = certs or make_tls_certs(self.directory / "tls")
        self.overrides: Overrides = overrides if overrides is not None else {}
        self.unregistered_timestamps: dict[str, int] = unregistered_timestamps if unregistered_timestamps is not None else {}
        self.max_payload = max_payload
        self.max_concurrent_streams = max_concurrent_streams
        self.expire_rejected_jwt = expire_rejected_jwt
        super().__init__(port)
        self._jwts: list[str] = []
        self._expired_jwts: set[str] = set()
        self._seen_tokens: set[str] = set()
        self._conns: dict[int, _Conn] = {}
        self._conn_count = 0
        self._tls_errors: list[str] = []
        self._errors: list[str] = []
        self._stopping = threading.Event()
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        self._ctx.load_cert_chain(str(self.certs.cert_file), str(self.certs.key_file))
        self._ctx.set_alpn_protocols(["h2"])

    # -- public properties

    @property
    def key_file(self) -> Path:
        return self.key.key_file

    @property
    def public_key(self) -> ec.EllipticCurvePublicKey:
        return self.key.public_key

    @property
    def ca_file(self) -> Path:
        return self.certs.ca_file

    @property
    def endpoint(self) -> str:
        return f"https://{HOST}:{self.port}"

    @property
    def jwts(self) -> list[str]:
        """Every distinct JWT seen in an `authorization` header, in order of first sight."""
        with self._cond:
            return list(self._jwts)

    @property
    def connections(self) -> int:
        """TCP connections accepted since construction (across restarts)."""
        with self._cond:
            return self._conn_count

    @property
    def open_connections(self) -> int:
        with self._cond:
            return len(self._conns)

    @property
    def tls_errors(self) -> list[str]:
        """Handshakes that failed (e.g. the client did not trust the CA, or offered no `h2`)."""
        with self._cond:
            return list(self._tls_errors)

    @property
    def errors(self) -> list[str]:
        """Unexpected exceptions inside the double (a bug in it, not in the client)."""
        with self._cond:
            return list(self._errors)

    # -- waiting (wait_for, assert_no_request_within: RequestRecorder)

    def _describe(self, record: dict) -> str:
        return _summary(record)

    def _context(self) -> str:
        return f" (connections={self._conn_count}, tls_errors={self._tls_errors})"

    # -- lifecycle

    def start(self) -> "FakeAPNs":
        if self._accept_thread is not None:
            raise RuntimeError("FakeAPNs already started")
        self._stopping.clear()
        self._listener = socket.create_server((HOST, self._port), backlog=128)
        self._listener.settimeout(0.1)
        self._port = self._listener.getsockname()[1]
        self._accept_thread = threading.Thread(target=self._accept_loop, name=f"fake-apns-accept-{self._port}", daemon=True)
        self._accept_thread.start()
        return self

    def stop(self, grace: float = 2.0) -> None:
        """GOAWAY + close every connection, stop listening, join every thread. Connections that have not
        closed within `grace` seconds (mid-handshake, or stuck sending) are cut. Restartable with start()
        (on the same port)."""
        if self._accept_thread is None:
            return
        self._stopping.set()
        self._accept_thread.join(5)
        with self._cond:
            conns = list(self._conns.values())
        deadline = time.monotonic() + grace
        for c in conns:
            if c.thread:
                c.thread.join(max(0.0, deadline - time.monotonic()))
        for c in conns:
            if c.thread and c.thread.is_alive():
                _hard_shutdown(c.sock)
        for c in conns:
            if c.thread:
                c.thread.join(5)
                if c.thread.is_alive():
                    self._error(f"connection thread {c.thread.name} did not stop")
        if self._accept_thread.is_alive():
            self._error("accept thread did not stop")
        self._accept_thread = None

    def close_connections(self, error_code: int = 0, reason: str | None = "Shutdown") -> None:
        """Send GOAWAY (debug data `{"reason": reason}`) on every open connection and close it; keep listening."""
        data = json.dumps({"reason": reason}).encode() if reason else b""
        with self._cond:
            for c in self._conns.values():
                c.goaway = (error_code, data)

    def __enter__(self) -> "FakeAPNs":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- internals

    def _error(self, text: str) -> None:
        with self._cond:
            self._errors.append(text)

    def _accept_loop(self) -> None:
        listener = self._listener
        assert listener is not None
        try:
            while not self._stopping.is_set():
                try:
                    sock, _addr = listener.accept()
                except socket.timeout:
                    continue
                except OSError:
                    if not self._stopping.is_set():
                        self._error("accept failed:\n" + traceback.format_exc())
                    break
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with self._cond:
                    self._conn_count += 1
                    conn = _Conn(self._conn_count, sock)
                    self._conns[conn.index] = conn
                conn.thread = threading.Thread(target=self._serve, args=(conn,), name=f"fake-apns-conn-{conn.index}", daemon=True)
                conn.thread.start()
        finally:
            listener.close()
            self._listener = None

    def _serve(self, conn: _Conn) -> None:
        try:
            self._serve_inner(conn)
        except _SOCKET_ERRORS:
            pass  # the peer went away
        except Exception:  # noqa: BLE001 — a bug in the double
            self._error(f"connection {conn.index}:\n" + traceback.format_exc())
        finally:
            try:
                conn.sock.close()
            except OSError:
                pass
            with self._cond:
                self._conns.pop(conn.index, None)
                self._cond.notify_all()

    def _serve_inner(self, conn: _Conn) -> None:
        raw = conn.sock
        raw.settimeout(10)
        tls = self._ctx.wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
        conn.sock = tls  # wrap_socket took over the descriptor: stop() must cut this one
        try:
            tls.do_handshake()
        except _SOCKET_ERRORS as exc:
            with self._cond:
                self._tls_errors.append(f"connection {conn.index}: {exc}")
            return
        if tls.selected_alpn_protocol() != "h2":
            with self._cond:
                self._tls_errors.append(f"connection {conn.index}: ALPN {tls.selected_alpn_protocol()!r}, not 'h2'")
            return
        tls.settimeout(None)
        h2conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        h2conn.local_settings = h2.settings.Settings(
            client=False, initial_values={h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.max_concurrent_streams})
        h2conn.initiate_connection()
        tls.sendall(h2conn.data_to_send())
        streams: dict[int, dict] = {}  # stream id -> {"headers": [...], "data": bytearray}
        pending: list[tuple[float, int, int, Reply, dict]] = []  # heap of (due, seq, stream id, reply, headers)
        outbox: dict[int, bytearray] = {}  # stream id -> response body bytes not yet sent (flow control)
        seq = itertools.count()

        def flush() -> None:
            data = h2conn.data_to_send()
            if data:
                tls.sendall(data)

        def send_body(sid: int) -> None:
            buf = outbox.get(sid)
            while buf is not None:
                try:
                    window = min(h2conn.local_flow_control_window(sid), h2conn.max_outbound_frame_size)
                except h2.exceptions.ProtocolError:  # the stream (or the connection) is gone
                    outbox.pop(sid, None)
                    return
                if window <= 0 and buf:
                    return
                chunk = bytes(buf[:window])
                del buf[:window]
                try:
                    h2conn.send_data(sid, chunk, end_stream=not buf)
                except h2.exceptions.ProtocolError:
                    outbox.pop(sid, None)
                    return
                if not buf:
                    outbox.pop(sid, None)
                    return

        def respond_due() -> None:
            now = time.monotonic()
            while pending and pending[0][0] <= now:
                _, _, sid, reply, headers = heapq.heappop(pending)
                body = _reply_body(reply)
                try:
                    h2conn.send_headers(sid, headers, end_stream=not body)
                except h2.exceptions.ProtocolError:  # reset by the client, or it sent GOAWAY
                    continue
                if body:
                    outbox[sid] = bytearray(body)
                    send_body(sid)

        closing = False
        while not closing:
            if self._stopping.is_set() or conn.goaway:
                code, data = conn.goaway or (0, json.dumps({"reason": "Shutdown"}).encode())
                try:
                    h2conn.close_connection(error_code=code, additional_data=data)
                except h2.exceptions.ProtocolError:
                    pass  # already closed
                flush()
                _close_tls(tls)
                return
            timeout = 0.1
            if pending:
                timeout = max(0.0, min(timeout, pending[0][0] - time.monotonic()))
            if tls.pending() == 0:
                readable, _, _ = select.select([tls], [], [], timeout)
                if not readable:
                    respond_due()
                    flush()
                    continue
            data = tls.recv(65536)
            if not data:
                return
            try:
                events = h2conn.receive_data(data)
            except (h2.exceptions.ProtocolError, UnicodeDecodeError) as exc:
                h2conn.close_connection(error_code=h2.errors.ErrorCodes.PROTOCOL_ERROR, additional_data=str(exc).encode()[:200])
                flush()
                return
            for ev in events:
                if isinstance(ev, h2.events.RequestReceived):
                    streams[ev.stream_id] = {"headers": list(ev.headers), "data": bytearray()}
                elif isinstance(ev, h2.events.DataReceived):
                    if ev.stream_id in streams:
                        streams[ev.stream_id]["data"] += ev.data
                    if ev.flow_controlled_length:
                        try:
                            h2conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                        except h2.exceptions.ProtocolError:
                            pass
                elif isinstance(ev, h2.events.StreamEnded):
                    st = streams.pop(ev.stream_id, None)
                    if st is None:
                        continue
                    reply, headers = self._handle(conn.index, ev.stream_id, st["headers"], bytes(st["data"]))
                    heapq.heappush(pending, (time.monotonic() + max(0.0, reply.delay), next(seq), ev.stream_id, reply, headers))
                elif isinstance(ev, h2.events.StreamReset):
                    streams.pop(ev.stream_id, None)
                    outbox.pop(ev.stream_id, None)
                    pending[:] = [p for p in pending if p[2] != ev.stream_id]
                    heapq.heapify(pending)
                elif isinstance(ev, h2.events.WindowUpdated):
                    for sid in ([ev.stream_id] if ev.stream_id else list(outbox)):
                        send_body(sid)
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    closing = True
            respond_due()
            flush()

    def _handle(self, conn_index: int, stream_id: int, raw_headers: list, raw: bytes) -> tuple[Reply, list]:
        headers: dict[str, str] = {}
        for name, value in raw_headers:
            headers[name.lower()] = value
        path = headers.get(":path", "")
        m = DEVICE_PATH_RE.match(path)
        token = m.group(1) if m else None
        auth = headers.get("authorization")
        jwt = None
        if auth is not None:
            scheme, _, rest = auth.partition(" ")
            jwt = rest.strip() if scheme.lower() == "bearer" and rest.strip() else None
        body: Any = None
        try:
            body = json.loads(raw) if raw else None
        except (ValueError, UnicodeDecodeError):
            body = None
        record = {
            "method": headers.get(":method"), "path": path, "token": token, "headers": headers,
            "body": body, "raw": raw, "jwt": jwt, "status": None, "reason": None, "time": time.time(),
            "connection": conn_index, "stream_id": stream_id,
        }
        with self._cond:
            if jwt and jwt not in self._jwts:
                self._jwts.append(jwt)
            try:
                reply = self._decide(record, auth, raw)
            except Exception:  # noqa: BLE001 — e.g. a test's override callable raised
                self._errors.append(f"answering {path}:\n" + traceback.format_exc())
                reply = Reply(500, "InternalServerError")
            record["status"] = reply.status
            record["reason"] = reply.reason or (reply.body.get("reason") if isinstance(reply.body, dict) else None)
            self._records.append(record)
            self._cond.notify_all()
        apns_id = headers.get("apns-id") or str(uuid.uuid4())
        out = [(":status", str(reply.status)), ("apns-id", apns_id)]
        if _reply_body(reply) and not any(k.lower() == "content-type" for k in reply.headers):
            out.append(("content-type", "application/json"))
        out += [(k.lower(), str(v)) for k, v in reply.headers.items()]
        return reply, out

    def _decide(self, rec: dict, auth: str | None, raw: bytes) -> Reply:
        headers = rec["headers"]
        token = rec["token"]
        if token is None:
            return Reply(404, "BadPath")
        if rec["method"] != "POST":
            return Reply(405, "MethodNotAllowed")
        jwt = rec["jwt"]
        if auth is None:
            return Reply(403, "MissingProviderToken")
        if jwt is None:
            return Reply(403, "InvalidProviderToken")
        problem = check_provider_token(jwt, self.key.public_key, self.key_id, self.team_id)
        if problem:
            return Reply(403, problem)
        if jwt in self._expired_jwts:
            return Reply(403, "ExpiredProviderToken")
        if not token:
            return Reply(400, "MissingDeviceToken")
        if not HEX_RE.match(token):
            return Reply(400, "BadDeviceToken")
        topic = headers.get("apns-topic")
        if topic is None:
            return Reply(400, "MissingTopic")
        if topic != self.topic:
            return Reply(400, "DeviceTokenNotForTopic")
        if headers.get("apns-push-type") not in PUSH_TYPES:
            return Reply(400, "InvalidPushType")
        if "apns-id" in headers and not UUID_RE.match(headers["apns-id"]):
            return Reply(400, "BadMessageId")
        if "apns-priority" in headers and headers["apns-priority"] not in ("1", "5", "10"):
            return Reply(400, "BadPriority")
        if "apns-expiration" in headers and not headers["apns-expiration"].isdigit():
            return Reply(400, "BadExpirationDate")
        if "apns-collapse-id" in headers and len(headers["apns-collapse-id"].encode()) > 64:
            return Reply(400, "BadCollapseId")
        if len(raw) > self.max_payload:
            return Reply(413, "PayloadTooLarge")
        if not raw:
            return Reply(400, "PayloadEmpty")
        if not isinstance(rec["body"], dict):
            return Reply(400, "BadPayload")
        lower = token.lower()
        if callable(self.overrides):
            answer = self.overrides(rec)
            if answer is not None:
                return _as_reply(answer)
        else:
            answer = self.overrides.get(token, self.overrides.get(lower))
            if answer is not None:
                return _as_reply(answer)
        return self._prefix_answer(lower, raw, jwt)

    def _prefix_answer(self, token: str, raw: bytes, jwt: str) -> Reply:
        first_time = token not in self._seen_tokens
        self._seen_tokens.add(token)
        prefix = token[:2]
        if prefix == "e0":
            if not first_time:
                return Reply(200)
            if self.expire_rejected_jwt:
                self._expired_jwts.add(jwt)
            return Reply(403, "ExpiredProviderToken")
        if prefix == "13":
            return Reply(413, "PayloadTooLarge") if len(raw) > PREFIX_13_LIMIT else Reply(200)
        if prefix == "41":
            ts = self.unregistered_timestamps.get(token)
            return Reply(410, "Unregistered", timestamp=int(time.time() * 1000) if ts is None else ts)
        if prefix in PREFIX_TABLE:
            status, reason = PREFIX_TABLE[prefix]
            return Reply(status, reason)
        return Reply(200)


def _close_tls(tls: ssl.SSLSocket, timeout: float = 1.0) -> None:
    """Send close_notify and give the peer a moment to answer it (it usually closes after GOAWAY)."""
    try:
        tls.settimeout(timeout)
        tls.unwrap()
    except _SOCKET_ERRORS:
        pass


def _hard_shutdown(sock: socket.socket) -> None:
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's, under any TLS layer
    except OSError:
        pass


def _summary(rec: dict) -> str:
    return f"{rec.get('method')} {rec.get('path')} -> {rec.get('status')} {rec.get('reason') or ''}".rstrip()
