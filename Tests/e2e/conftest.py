"""Black-box harness for ClawRelay's Clawline v1 listener.

Every test starts its own `clawrelay serve` on OS-chosen loopback ports with a fresh data
directory, talks to it over real sockets, and stops it with SIGTERM (exit code 0 expected).
Async tests (`async def test_...`) run under `asyncio.run` via the hook below; no plugin needed.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import http.client
import inspect
import json
import os
import re
import signal
import socket
import struct
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
from websockets.asyncio.client import connect as ws_connect

import clawline_app_schema
from websockets.exceptions import ConnectionClosed

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BIN = REPO_ROOT / ".build" / "debug" / "clawrelay"
READY_RE = re.compile(r"clawrelay ready( \w+=\S+:\d+)+")  # tolerant of listener order
READY_EXACT_RE = re.compile(r"^clawrelay ready clawline=(\S+):(\d+) admin=(\S+):(\d+)$")  # the documented form
LISTENER_RE = re.compile(r"(\w+)=(\S+):(\d+)")
STARTUP_TIMEOUT = 20.0
STOP_TIMEOUT = 15.0
TEST_TIMEOUT = 90.0
UUID4_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", re.I)
SERVER_ID_RE = re.compile(r"^s_\S+$")
MISSING = object()


def relay_bin() -> Path:
    return Path(os.environ.get("CLAWRELAY_BIN", str(DEFAULT_BIN)))


def forced_event_loop() -> str | None:
    """`CLAWRELAY_E2E_EVENT_LOOP=poll` (or `epoll`) runs every relay the suite starts on that `[server]
    event_loop` (unless its config names one), so the whole suite can run on either loop."""
    return os.environ.get("CLAWRELAY_E2E_EVENT_LOOP") or None


def with_event_loop(text: str) -> str:
    """A config file's text with `forced_event_loop()` in its `[server]` table; without a `[server]`
    table one is added at the end, so no line of the file moves (tests read `FILE:LINE`s)."""
    loop = forced_event_loop()
    if loop is None or re.search(r"^\s*event_loop\s*=", text, re.M):
        return text
    key = f"event_loop = {json.dumps(loop)}"
    header = re.search(r"^\[server\][^\n]*\n", text, re.M)
    if header is None:
        return text + ("" if text.endswith("\n") or not text else "\n") + f"\n[server]\n{key}\n"
    return text[: header.end()] + key + "\n" + text[header.end() :]


def forced_store() -> str | None:
    """`CLAWRELAY_E2E_STORE=postgres` runs every relay the suite starts on a PostgreSQL database of
    its own (a server the suite starts, `postgres_server.py`), unless its config has a `[store]`."""
    return os.environ.get("CLAWRELAY_E2E_STORE") or None


def store_section() -> str:
    """The `[store]` table `forced_store()` asks for: a fresh database on the suite's server."""
    import postgres_server

    server = postgres_server.shared()
    return f'\n[store]\nkind = "postgres"\nurl = "{server.url(server.create_database())}"\n'


def with_store(text: str, section: str) -> str:
    """A config file's text with `section` (a `[store]` table) added at the end, so no line of the
    file moves; unchanged when the text has a `[store]` of its own."""
    if re.search(r"^\[store\]", text, re.M):
        return text
    return text + ("" if text.endswith("\n") or not text else "\n") + section


# --------------------------------------------------------------------------------------------
# async tests without pytest-asyncio


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = pyfuncitem._fixtureinfo.argnames
        kwargs = {name: pyfuncitem.funcargs[name] for name in names}
        asyncio.run(_run_test(pyfuncitem.obj(**kwargs)))
        return True
    return None


_OPEN_CLIENTS: list = []


async def _run_test(coro) -> None:
    """Run one async test, then close the sockets it left open (before the loop goes away)."""
    try:
        await asyncio.wait_for(coro, TEST_TIMEOUT)
    finally:
        clients, _OPEN_CLIENTS[:] = list(_OPEN_CLIENTS), []
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)


# --------------------------------------------------------------------------------------------
# config


def default_config() -> dict[str, Any]:
    return {
        "admin": {"listen": "127.0.0.1:0"},
        "clawline": {
            "listen": "127.0.0.1:0",
            "pending_ttl_seconds": 300,
            "max_pending_requests": 100,
            "token_ttl_seconds": 31536000,
            "max_replay_messages": 500,
            "max_queued_messages": 20,
            "stream_inactivity_seconds": 300,
            "messages_per_second": 5,
            "typing_per_second": 2,
            "pair_requests_per_minute": 5,
            "auth_attempts_per_minute": 5,
            "typing_timeout_seconds": 10,
            "ping_interval_seconds": 30,
            "pong_timeout_seconds": 90,
            "max_upload_bytes": 104857600,
            "backend": "echo",
        },
        "backends": [
            {"name": "echo", "kind": "echo", "delay_ms": 0},
            {
                "name": "cmd",
                "kind": "command",
                "command": ["/bin/sh", "-c", "cat; exit 3"],
                "timeout_seconds": 30,
            },
        ],
        "audit": {"enabled": True},
    }


def make_config(
    clawline: dict | None = None,
    admin: dict | None = None,
    echo: dict | None = None,
    cmd: dict | None = None,
    audit: dict | None = None,
) -> dict[str, Any]:
    """The default config with per-section overrides (`echo`/`cmd` patch those backends)."""
    cfg = default_config()
    cfg["clawline"].update(clawline or {})
    cfg["admin"].update(admin or {})
    cfg["audit"].update(audit or {})
    for backend in cfg["backends"]:
        patch = echo if backend["name"] == "echo" else cmd
        backend.update(patch or {})
    return cfg


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):  # an inline table, e.g. a command backend's env
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot render {value!r} as TOML")


def render_toml(cfg: dict[str, Any]) -> str:
    """Render a dict: scalars first, then [tables], then [[arrays of tables]] (and `with_event_loop`)."""
    return with_event_loop(render_plain_toml(cfg))


def render_plain_toml(cfg: dict[str, Any]) -> str:
    """Render a dict: scalars first, then [tables], then [[arrays of tables]]."""
    lines: list[str] = []
    for key, value in cfg.items():
        if not isinstance(value, (dict, list)) or (isinstance(value, list) and not all(isinstance(v, dict) for v in value)):
            lines.append(f"{key} = {toml_value(value)}")
    for key, value in cfg.items():
        if isinstance(value, dict):
            lines += ["", f"[{key}]"] + [f"{k} = {toml_value(v)}" for k, v in value.items()]
    for key, value in cfg.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:
                lines += ["", f"[[{key}]]"] + [f"{k} = {toml_value(v)}" for k, v in item.items()]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# the relay process


class Relay:
    """One `clawrelay serve` process bound to a data dir. Restartable on the same data dir."""

    def __init__(self, workdir: Path, config: dict[str, Any] | str):
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.data_dir = workdir / "data"
        self.config_path = workdir / "config.toml"
        self.config = config
        text = with_event_loop(config) if isinstance(config, str) else render_toml(config)
        self.config_path.write_text(text)
        # One database for the relay's whole life: every start (after a test rewrote the file too) uses it.
        self.store_section = store_section() if forced_store() == "postgres" else None
        self.proc: subprocess.Popen | None = None
        self.stdout_lines: list[str] = []
        self.starts = 0
        self.host = "127.0.0.1"
        self.port = 0
        self.admin_host = "127.0.0.1"
        self.admin_port = 0
        self.expected_exit: int | None = 0

    # -- process control

    def start(self, timeout: float = STARTUP_TIMEOUT) -> "Relay":
        binary = relay_bin()
        if not binary.exists():
            raise AssertionError(f"relay binary not found at {binary} (run `swift build` or set CLAWRELAY_BIN)")
        if self.store_section:
            self.config_path.write_text(with_store(self.config_path.read_text(), self.store_section))
        self.starts += 1
        self.stderr_path = self.workdir / f"stderr.{self.starts}.log"
        self.stdout_lines = []
        ready = threading.Event()
        lines = self.stdout_lines
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [str(binary), "serve", "--config", str(self.config_path), "--data-dir", str(self.data_dir)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                bufsize=1,
            )
        proc = self.proc

        def drain():
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line.rstrip("\n"))
                if READY_RE.search(line):
                    ready.set()
            ready.set()  # EOF: wake the waiter so it can report the exit

        threading.Thread(target=drain, daemon=True).start()
        if not ready.wait(timeout) or not any(READY_RE.search(l) for l in lines):
            rc = proc.poll()
            if rc is None:
                proc.kill()
                proc.wait()
            raise AssertionError(
                f"relay did not print the ready line within {timeout}s (exit={rc})\n"
                f"stdout: {lines}\nstderr: {self.stderr_text()[-4000:]}"
            )
        self.ready_line = next(l for l in lines if READY_RE.search(l))
        listeners = {name: (host, int(port)) for name, host, port in LISTENER_RE.findall(self.ready_line)}
        assert "clawline" in listeners and "admin" in listeners, f"ready line lacks a listener: {self.ready_line!r}"
        self.listeners = listeners
        self.host, self.port = listeners["clawline"]
        self.admin_host, self.admin_port = listeners["admin"]
        self.expected_exit = 0
        return self

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def terminate(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM and wait; hard-kill (and fail) if it does not exit in time."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.expected_exit = None
                raise AssertionError(f"relay ignored SIGTERM for {timeout}s; killed")
        self.expected_exit = None  # the caller asserts the exit code it got
        return self.proc.returncode

    def kill(self) -> int:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()
        self.expected_exit = None
        return self.proc.returncode

    def restart(self) -> "Relay":
        if self.running:
            rc = self.terminate()
            assert rc == 0, f"relay exit code {rc} on SIGTERM"
        return self.start()

    def stderr_text(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except (OSError, AttributeError):
            return ""

    # -- addresses

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def http(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
             admin: bool = False, timeout: float = 10.0, port: int | None = None) -> "HttpResponse":
        port = port or (self.admin_port if admin else self.port)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            data = resp.read()
            return HttpResponse(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
        finally:
            conn.close()

    # -- operator CLI

    def cli(self, *args: str, check: bool = True, timeout: float = 20.0) -> subprocess.CompletedProcess:
        cmd = [str(relay_bin()), *args, "--data-dir", str(self.data_dir)]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"{cmd} exited {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}")
        return result

    def devices(self) -> list[dict]:
        out = self.cli("devices", "list", "--json").stdout
        data = json.loads(out)
        assert isinstance(data, list), f"devices list --json must print a JSON array, got {out!r}"
        return data

    def device(self, device_id: str) -> dict | None:
        return next((d for d in self.devices() if d.get("deviceId") == device_id), None)

    def audit(self, *args: str) -> list[dict]:
        out = self.cli("audit", "--json", *args).stdout
        rows = []
        for line in out.splitlines():
            if line.strip():
                rows.append(json.loads(line))
        return rows


@dataclass
class HttpResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@pytest.fixture
def relay_factory(tmp_path):
    """`relay_factory(clawline={...}, echo={...}, ...)` starts a relay; all are stopped at teardown."""
    relays: list[Relay] = []

    def factory(config: dict | str | None = None, start: bool = True, **overrides) -> Relay:
        cfg = config if config is not None else make_config(**overrides)
        relay = Relay(tmp_path / f"relay{len(relays)}", cfg)
        relays.append(relay)
        if start:
            relay.start()
        return relay

    yield factory
    problems = []
    for relay in relays:
        if relay.proc is None:
            continue
        if relay.proc.poll() is not None and relay.expected_exit is not None and relay.proc.returncode != relay.expected_exit:
            problems.append(f"relay exited early with {relay.proc.returncode}: {relay.stderr_text()[-2000:]}")
            continue
        if relay.running:
            try:
                rc = relay.terminate()
            except AssertionError as exc:
                problems.append(str(exc))
                continue
            if rc != 0:
                problems.append(f"relay exit code {rc} after SIGTERM (expected 0): {relay.stderr_text()[-2000:]}")
    if problems:
        pytest.fail("\n".join(problems))


# --------------------------------------------------------------------------------------------
# upstream accounts (`clawrelay accounts` is a CLI view: polled, there is no event to await)


def free_port() -> int:
    """A loopback port nothing listens on now (for a relay that must come back on the same one)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accounts(relay) -> list[dict]:
    return json.loads(relay.cli("accounts", "--json").stdout)


def wait_account(relay, states, timeout: float = 25.0, name: str | None = None) -> dict:
    """Polls until the account (the first, or `name`) is in one of `states`; returns it."""
    states = {states} if isinstance(states, str) else set(states)
    deadline = time.monotonic() + timeout
    while True:
        current = accounts(relay)
        match = next((a for a in current if name is None or a["name"] == name), None)
        if match and match["state"] in states:
            return match
        assert time.monotonic() < deadline, f"account {name or ''} never reached {sorted(states)}: {current}"
        time.sleep(0.1)


@pytest.fixture
def relay(relay_factory) -> Relay:
    return relay_factory()


# --------------------------------------------------------------------------------------------
# polling (for CLI/audit state, which has no event to await)


def wait_for(fn: Callable[[], Any], timeout: float = 5.0, interval: float = 0.1, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; last value: {last!r}")
        time.sleep(interval)


TCP_ESTABLISHED = 1  # tcpi_state in `struct tcp_info` (linux/tcp.h)


def tcp_state(sock) -> int:
    """A socket's TCP state as the kernel keeps it (`tcpi_state`), read without touching its data."""
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]


async def async_wait_for(fn: Callable[[], Any], timeout: float = 5.0, interval: float = 0.1, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        last = await asyncio.to_thread(fn)
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; last value: {last!r}")
        await asyncio.sleep(interval)


# --------------------------------------------------------------------------------------------
# WebSocket client over `websockets`


class Closed(AssertionError):
    """The server closed the socket while a frame was expected."""

    def __init__(self, code: int | None, reason: str, frames: list[dict]):
        super().__init__(f"socket closed (code={code}, reason={reason!r}); frames before close: {frames}")
        self.code = code
        self.reason = reason
        self.frames = frames


class Client:
    def __init__(self, ws, name: str = "client"):
        self.ws = ws
        self.name = name
        self.received: list[dict] = []

    @classmethod
    async def connect(cls, relay: Relay, name: str = "client") -> "Client":
        ws = await ws_connect(
            relay.ws_url,
            compression=None,
            ping_interval=None,  # clients never send pings (server-initiated keepalive only)
            max_size=None,
            proxy=None,
            open_timeout=10,
            close_timeout=2,
        )
        client = cls(ws, name)
        _OPEN_CLIENTS.append(client)
        return client

    async def send_json(self, obj: Any) -> None:
        await self.ws.send(json.dumps(obj))

    async def send_text(self, text: str) -> None:
        await self.ws.send(text)

    async def recv_json(self, timeout: float = 5.0) -> dict:
        try:
            raw = await asyncio.wait_for(self.ws.recv(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"[{self.name}] no frame within {timeout}s; received so far: {self.received[-10:]}") from None
        except ConnectionClosed as exc:
            rcvd = exc.rcvd
            raise Closed(rcvd.code if rcvd else None, rcvd.reason if rcvd else "", self.received[-10:]) from None
        assert isinstance(raw, str), f"[{self.name}] expected a text frame, got binary {raw[:64]!r}"
        frame = json.loads(raw)
        self.received.append(frame)
        clawline_app_schema.check(frame)
        return frame

    async def recv_until(self, pred: Callable[[dict], bool], timeout: float = 5.0) -> tuple[dict, list[dict]]:
        """Read until `pred(frame)`; return (matching frame, frames skipped before it)."""
        deadline = time.monotonic() + timeout
        skipped: list[dict] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"[{self.name}] no matching frame within {timeout}s; skipped: {skipped}")
            try:
                frame = await self.recv_json(left)
            except Closed as exc:
                raise Closed(exc.code, exc.reason, skipped) from None
            except AssertionError:
                raise AssertionError(f"[{self.name}] no matching frame within {timeout}s; skipped: {skipped}") from None
            if pred(frame):
                return frame, skipped
            skipped.append(frame)

    async def expect(self, type_: str, timeout: float = 5.0, **fields) -> dict:
        """The next frame must have this type (and these field values)."""
        frame = await self.recv_json(timeout)
        assert frame.get("type") == type_, f"[{self.name}] expected {type_} {fields}, got {frame}"
        for key, value in fields.items():
            assert frame.get(key) == value, f"[{self.name}] expected {key}={value!r} in {frame}"
        return frame

    async def expect_error(self, code: str | set[str], timeout: float = 5.0, skip: Callable[[dict], bool] | None = None) -> dict:
        """Next frame (ignoring frames matching `skip`) must be `error` with this code."""
        codes = {code} if isinstance(code, str) else set(code)
        while True:
            frame = await self.recv_json(timeout)
            if skip and skip(frame):
                continue
            assert frame.get("type") == "error" and frame.get("code") in codes, \
                f"[{self.name}] expected error {sorted(codes)}, got {frame}"
            assert isinstance(frame.get("message"), str), f"error frames carry a message string: {frame}"
            return frame

    async def expect_close(self, code: int | None, timeout: float = 5.0) -> list[dict]:
        """Read until the server closes; assert the close code; return frames seen before it."""
        frames: list[dict] = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"[{self.name}] socket still open after {timeout}s; frames: {frames}")
            try:
                frames.append(await self.recv_json(left))
            except Closed as exc:
                if code is not None:
                    assert exc.code == code, f"[{self.name}] expected close {code}, got {exc.code} ({exc.reason!r}); frames: {frames}"
                return frames
            except AssertionError:
                raise AssertionError(f"[{self.name}] socket still open after {timeout}s; frames: {frames}") from None

    async def expect_silence(self, duration: float, ignore: Callable[[dict], bool] | None = None) -> list[dict]:
        """Assert no (non-ignored) frame arrives within `duration`; for absence checks only."""
        deadline = time.monotonic() + duration
        ignored = []
        while (left := deadline - time.monotonic()) > 0:
            try:
                raw = await asyncio.wait_for(self.ws.recv(), left)
            except asyncio.TimeoutError:
                break
            frame = json.loads(raw)
            self.received.append(frame)
            if ignore and ignore(frame):
                ignored.append(frame)
                continue
            raise AssertionError(f"[{self.name}] unexpected frame: {frame}")
        return ignored

    async def assert_open(self) -> None:
        """Probe: an unknown frame type must be answered with invalid_message on a live socket."""
        await self.send_json({"type": "probe_unknown_type_" + uuid.uuid4().hex[:6]})
        frame, _ = await self.recv_until(lambda f: f.get("type") == "error", timeout=5.0)
        assert frame.get("code") == "invalid_message", f"[{self.name}] probe answered with {frame}"

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), 3)

    @property
    def is_closed(self) -> bool:
        return self.ws.close_code is not None


# --------------------------------------------------------------------------------------------
# protocol helpers


@dataclass
class Device:
    device_id: str
    token: str
    user_id: str
    name: str = "device"

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def new_device_id() -> str:
    return str(uuid.uuid4())


def new_client_id() -> str:
    return "c_" + uuid.uuid4().hex


def pair_request(device_id: str, name: str = "Test Device", **extra) -> dict:
    frame = {
        "type": "pair_request",
        "protocolVersion": 1,
        "deviceId": device_id,
        "claimedName": name,
        "deviceInfo": {"platform": "iOS", "model": "iPhone 15", "osVersion": "17.4", "appVersion": "1.0"},
    }
    frame.update(extra)
    return frame


def auth_frame(device: Device, last_message_id: Any = MISSING, **extra) -> dict:
    frame = {"type": "auth", "protocolVersion": 1, "token": device.token, "deviceId": device.device_id}
    if last_message_id is not MISSING:
        frame["lastMessageId"] = last_message_id
    frame.update(extra)
    return frame


def message_frame(content: str, cid: str | None = None, attachments: Any = MISSING) -> dict:
    frame = {"type": "message", "id": cid or new_client_id(), "content": content}
    if attachments is not MISSING:
        frame["attachments"] = attachments
    return frame


def jwt_parts(token: str) -> tuple[dict, dict, str]:
    head, payload, sig = token.split(".")
    return _b64url_json(head), _b64url_json(payload), sig


def _b64url_json(part: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def assert_pair_success(frame: dict, device_id: str) -> None:
    assert frame.get("type") == "pair_result", frame
    assert frame.get("success") is True, frame
    assert isinstance(frame.get("token"), str) and frame["token"].count(".") == 2, frame
    assert isinstance(frame.get("userId"), str) and UUID4_RE.match(frame["userId"]), frame
    _, claims, _ = jwt_parts(frame["token"])
    assert claims.get("sub") == frame["userId"], claims
    assert claims.get("deviceId") == device_id, claims
    assert "reason" not in frame, frame


async def pair_first_admin(relay: Relay, device_id: str | None = None, name: str = "Admin") -> Device:
    device_id = device_id or new_device_id()
    client = await Client.connect(relay, "first-admin-pairing")
    await client.send_json(pair_request(device_id, name))
    frame = await client.recv_json()
    assert_pair_success(frame, device_id)
    await client.close()
    return Device(device_id, frame["token"], frame["userId"], name)


async def relay_of_one_user(relay_factory, cfg: dict, sections: tuple[str, ...] = ("gateway",)) -> tuple["Relay", Device]:
    """A relay whose `sections` (`[gateway]`, `[discoclaw]`, …) serve the first Clawline admin's
    user: pairs the admin, then restarts with their `user_id` set to it."""
    relay = relay_factory(cfg)
    admin = await pair_first_admin(relay)
    relay.terminate()
    for section in sections:
        cfg[section]["user_id"] = admin.user_id
    relay.config_path.write_text(render_toml(cfg))
    relay.start()
    return relay, admin


async def auth(relay: Relay, device: Device, last_message_id: Any = MISSING, name: str | None = None) -> tuple[Client, dict]:
    client = await Client.connect(relay, name or device.name)
    await client.send_json(auth_frame(device, last_message_id))
    result = await client.expect("auth_result")
    assert result.get("success") is True, f"auth failed for {device.name}: {result}"
    await expect_user_info(client, device, is_admin=result.get("isAdmin"))
    return client, result


async def expect_user_info(client: "Client", device: Device, is_admin: bool | None = None) -> dict:
    """The frame after a successful auth_result: who the user is and whether it is an admin
    (the app unlocks its admin channel from it)."""
    info = await client.expect("user_info", userId=device.user_id)
    assert isinstance(info.get("isAdmin"), bool), info
    assert is_admin is None or info["isAdmin"] is is_admin, info
    return info


async def setup_admin(relay: Relay) -> tuple[Device, Client]:
    """Pair the first device (admin) and open its authenticated session."""
    admin = await pair_first_admin(relay)
    client, _ = await auth(relay, admin, name="admin")
    return admin, client


async def pair_and_approve(
    relay: Relay,
    admin_client: Client,
    user_id: str | None = None,
    device_id: str | None = None,
    name: str = "Second",
) -> Device:
    """Pair a new device through `admin_client` (an authenticated admin session)."""
    device_id = device_id or new_device_id()
    user_id = user_id or str(uuid.uuid4())
    requester = await Client.connect(relay, f"{name}-pairing")
    await requester.send_json(pair_request(device_id, name))
    request, _ = await admin_client.recv_until(
        lambda f: f.get("type") == "pair_approval_request" and f.get("deviceId") == device_id)
    await admin_client.send_json({"type": "pair_decision", "deviceId": device_id, "userId": user_id, "approve": True})
    result = await requester.recv_json()
    assert_pair_success(result, device_id)
    assert result["userId"] == user_id, result
    await requester.close()
    return Device(device_id, result["token"], user_id, name)


def is_assistant_final(content: str | None = None, msg_id: str | None = None) -> Callable[[dict], bool]:
    def pred(f: dict) -> bool:
        return (f.get("type") == "message" and f.get("role") == "assistant" and f.get("streaming") is False
                and (content is None or f.get("content") == content) and (msg_id is None or f.get("id") == msg_id))
    return pred


def is_user_echo(content: str | None = None) -> Callable[[dict], bool]:
    def pred(f: dict) -> bool:
        return (f.get("type") == "message" and f.get("role") == "user"
                and (content is None or f.get("content") == content))
    return pred


@dataclass
class Exchange:
    ack: dict
    echo: dict
    final: dict
    frames: list[dict]


async def send_and_complete(client: Client, content: str, cid: str | None = None, timeout: float = 10.0,
                            attachments: Any = MISSING, answer: str | None = None) -> Exchange:
    """Send a message; read through its ack, user echo and the final (`answer`; default the echo backend's)."""
    frame = message_frame(content, cid, attachments)
    await client.send_json(frame)
    final, frames = await client.recv_until(is_assistant_final(answer if answer is not None else f"echo: {content}"), timeout)
    frames.append(final)
    acks = [f for f in frames if f.get("type") == "ack" and f.get("id") == frame["id"]]
    echoes = [f for f in frames if is_user_echo(content)(f)]
    assert len(acks) == 1, f"expected one ack for {frame['id']}: {frames}"
    assert len(echoes) == 1, f"expected one user echo for {content!r}: {frames}"
    assert frames.index(acks[0]) < frames.index(echoes[0]), f"ack must precede the user echo: {frames}"
    return Exchange(acks[0], echoes[0], final, frames)


# --------------------------------------------------------------------------------------------
# HTTP helpers


def multipart(field: str, filename: str, content: bytes, content_type: str) -> tuple[bytes, str]:
    boundary = "----clawrelaye2e" + uuid.uuid4().hex
    body = (
        f"--{boundary}\r\n"
        f'Content-Disposition: form-data; name="{field}"; filename="{filename}"\r\n'
        f"Content-Type: {content_type}\r\n\r\n"
    ).encode() + content + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def upload(relay: Relay, token: str | None, content: bytes, content_type: str = "image/png",
           field: str = "file", filename: str = "file.bin", auth_header: str | None = None) -> HttpResponse:
    body, ctype = multipart(field, filename, content, content_type)
    headers = {"Content-Type": ctype}
    if auth_header is not None:
        headers["Authorization"] = auth_header
    elif token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return relay.http("POST", "/upload", body=body, headers=headers)


def assert_http_error(resp: HttpResponse, status: int, code: str) -> dict:
    assert resp.status == status, f"expected HTTP {status} {code}, got {resp.status}: {resp.body[:300]!r}"
    body = resp.json()
    assert body.get("type") == "error" and body.get("code") == code, body
    assert isinstance(body.get("message"), str), body
    return body


PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


async def send_picture_and_upload(relay: Relay, admin: Device, client: Client, text: str, timeout: float = 20) -> None:
    """Sends `text` with an inline PNG and the same PNG uploaded as an asset, and waits for the echo
    backend (here or upstream) to name both: the upload was read and passed on like the inline one."""
    resp = upload(relay, admin.token, PNG_1PX)
    assert resp.status == 200, resp.body
    inline = {"type": "image", "mimeType": "image/png", "data": base64.b64encode(PNG_1PX).decode()}
    await send_and_complete(client, text, attachments=[inline, {"type": "asset", "assetId": resp.json()["assetId"]}],
                            answer=f"echo: {text}\n[attached: unnamed, image/png]\n[attached: unnamed, image/png]", timeout=timeout)


def image_attachment(raw: bytes, mime: str = "image/png") -> dict:
    return {"type": "image", "mimeType": mime, "data": base64.b64encode(raw).decode()}


# --------------------------------------------------------------------------------------------
# raw WebSocket client (controls ping/pong, which `websockets` answers on its own)


class RawWebSocket:
    """Minimal RFC 6455 client with explicit control frames (`websockets` answers pings itself).

    A background task reads frames: server pings are recorded (and answered only when
    `answer_pings`), data messages and the close go to a queue read by `recv_json`.
    """

    OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answer_pings: bool):
        self.reader = reader
        self.writer = writer
        self.answer_pings = answer_pings
        self.pings: list[float] = []  # monotonic arrival times of server pings
        self.pongs_seen = 0
        self.close_code: int | None = None
        self.closed_at: float | None = None
        self.queue: asyncio.Queue = asyncio.Queue()
        self.ping_event = asyncio.Event()
        self.task = asyncio.create_task(self._read_loop())

    @classmethod
    async def connect(cls, relay: Relay, answer_pings: bool, port: int | None = None, path: str = "/ws") -> "RawWebSocket":
        port = port or relay.port
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()
        )
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        status = head.split(b"\r\n", 1)[0]
        assert b" 101" in status, f"upgrade refused: {head!r}"
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        assert accept.encode() in head, f"bad Sec-WebSocket-Accept in {head!r}"
        raw = cls(reader, writer, answer_pings)
        _OPEN_CLIENTS.append(raw)
        return raw

    async def send_frame(self, opcode: int, payload: bytes) -> None:
        header = bytearray([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header.append(0x80 | n)
        elif n < 65536:
            header.append(0x80 | 126)
            header += struct.pack("!H", n)
        else:
            header.append(0x80 | 127)
            header += struct.pack("!Q", n)
        mask = os.urandom(4)
        header += mask
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.writer.write(bytes(header) + masked)
        await self.writer.drain()

    async def send_json(self, obj: Any) -> None:
        await self.send_frame(self.OP_TEXT, json.dumps(obj).encode())

    async def send_header_only(self, opcode: int, declared: int, first: bytes = b"") -> None:
        """A frame header declaring `declared` payload bytes, followed by only `first` of them."""
        mask = os.urandom(4)
        header = bytes([0x80 | opcode, 0x80 | 127]) + struct.pack("!Q", declared) + mask
        self.writer.write(header + bytes(b ^ mask[i % 4] for i, b in enumerate(first)))
        await self.writer.drain()

    async def _read_frame(self) -> tuple[int, bool, bytes]:
        b1, b2 = await self.reader.readexactly(2)
        fin, opcode, n = bool(b1 & 0x80), b1 & 0x0F, b2 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", await self.reader.readexactly(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", await self.reader.readexactly(8))
        mask = await self.reader.readexactly(4) if b2 & 0x80 else None
        payload = await self.reader.readexactly(n)
        if mask:
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        return opcode, fin, payload

    async def _read_loop(self) -> None:
        buffer = b""
        try:
            while True:
                opcode, fin, payload = await self._read_frame()
                if opcode == self.OP_PING:
                    self.pings.append(time.monotonic())
                    self.ping_event.set()
                    if self.answer_pings:
                        await self.send_frame(self.OP_PONG, payload)
                elif opcode == self.OP_PONG:
                    self.pongs_seen += 1
                elif opcode == self.OP_CLOSE:
                    self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                    break
                else:
                    buffer += payload
                    if fin:
                        await self.queue.put(json.loads(buffer))
                        buffer = b""
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.closed_at = time.monotonic()
            await self.queue.put(None)

    async def recv_json(self, timeout: float = 5.0) -> dict:
        """Next data message; raises EOFError once the server closed or dropped the socket."""
        item = await asyncio.wait_for(self.queue.get(), timeout)
        if item is None:
            await self.queue.put(None)
            raise EOFError(f"closed (close code {self.close_code})")
        return item

    async def wait_pings(self, count: int, timeout: float) -> None:
        """Wait until `count` server pings have arrived."""
        deadline = time.monotonic() + timeout
        while len(self.pings) < count:
            left = deadline - time.monotonic()
            if left <= 0 or self.closed_at is not None:
                raise AssertionError(f"saw {len(self.pings)} of {count} pings (closed={self.closed_at is not None})")
            self.ping_event.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.ping_event.wait(), left)

    async def wait_closed(self, timeout: float) -> float:
        """Wait until the server closes or drops the socket; returns the monotonic close time."""
        try:
            await asyncio.wait_for(asyncio.shield(self.task), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"server did not close within {timeout}s (pings seen: {len(self.pings)})") from None
        assert self.closed_at is not None
        return self.closed_at

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(Exception):
            self.writer.close()
            await asyncio.wait_for(self.writer.wait_closed(), 2)
