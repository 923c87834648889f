"""A Claude Companion test client, and every frame checked against the real iOS app's decoder.

The client speaks the wire format the app (and the integration guide's clients) speak: WebSocket
`/ws?token=T` (or `Authorization: Bearer`), envelopes `{type, requestId, data}`, the app's bare
`client_backgrounding`. A reader task records every frame a socket receives and runs
`companion_decode.decode_problems` on it; the autouse fixture `app_decodes_every_frame` (import it
into each test module) fails the test if any frame would be dropped by the app's decoder or validator.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable
from urllib.parse import quote

from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

import conftest
from companion_decode import (  # noqa: F401  (re-exported for the test modules)
    DECODE_PROBLEMS,
    ISO_MS_Z_RE,
    app_decodes_every_frame,
    decode_problems,
    is_iso,
)
from conftest import HttpResponse, make_config

TOKEN = "e2e_companion-token-0123456789ABCDEF"  # the app's URL-safe alphabet, >= 16 characters
MISSING = object()

# --------------------------------------------------------------------------------------------
# config and relay


def companion_config(projects_root: Path | None = None, echo: dict | None = None, cmd: dict | None = None,
                     **companion: Any) -> dict:
    """The default config (keeps [clawline] and [admin]) plus a `[companion]` section on port 0.

    `companion` keys override the section; a value of None removes the key (e.g. auth_token=None).
    """
    cfg = make_config(echo=echo, cmd=cmd)
    section: dict[str, Any] = {"listen": "127.0.0.1:0", "auth_token": TOKEN}
    if projects_root is not None:
        section["projects_root"] = str(projects_root)
    for key, value in companion.items():
        if value is None:
            section.pop(key, None)
        else:
            section[key] = value
    cfg["companion"] = section
    return cfg


def make_projects(root: Path, names=("app", "lib"), hidden=(".hidden",)) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name in (*names, *hidden):
        (root / name).mkdir(exist_ok=True)
    (root / "notes.txt").write_text("a file, not a project\n")
    return root


def start_companion(relay_factory, tmp_path: Path, names=("app", "lib"), **kwargs):
    """A relay with `[companion]`, projects_root = tmp_path/projects holding `names` (+ .hidden, a file)."""
    root = make_projects(tmp_path / "projects", names)
    relay = relay_factory(companion_config(projects_root=root, **kwargs))
    relay.projects = root
    return relay


def write_config(relay, cfg: dict) -> None:
    """Replace the config a (stopped or running) relay starts with next time."""
    relay.config = cfg
    relay.config_path.write_text(conftest.render_toml(cfg))


def cport(relay) -> int:
    assert "companion" in relay.listeners, f"ready line has no companion listener: {relay.ready_line!r}"
    return relay.listeners["companion"][1]


def real(path: str | Path) -> str:
    return os.path.realpath(str(path))


def rest(relay, method: str, path: str, body: Any = MISSING, token: str | None = TOKEN, auth: str = "bearer",
         headers: dict | None = None, raw: bytes | None = None, timeout: float = 15.0) -> HttpResponse:
    """HTTP to the companion listener; `auth` is "bearer", "query" (`?token=`) or "none"."""
    hdrs = dict(headers or {})
    if token is not None and auth == "bearer":
        hdrs["Authorization"] = f"Bearer {token}"
    if token is not None and auth == "query":
        path += ("&" if "?" in path else "?") + "token=" + quote(token)
    data = raw
    if body is not MISSING:
        data = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    conn = http.client.HTTPConnection("127.0.0.1", cport(relay), timeout=timeout)
    try:
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        payload = resp.read()
        return HttpResponse(resp.status, {k.lower(): v for k, v in resp.getheaders()}, payload)
    finally:
        conn.close()


def rest_json(relay, method: str, path: str, status: int = 200, **kwargs) -> Any:
    resp = rest(relay, method, path, **kwargs)
    assert resp.status == status, f"{method} {path}: expected {status}, got {resp.status} {resp.body[:500]!r}"
    try:
        return resp.json()
    except ValueError:
        raise AssertionError(f"{method} {path}: body is not JSON: {resp.body[:300]!r}") from None


async def async_rest_json(relay, method: str, path: str, status: int = 200, **kwargs) -> Any:
    """`rest_json` off the event loop (for requests that wait for an answer while sockets read)."""
    return await asyncio.to_thread(rest_json, relay, method, path, status, **kwargs)


def projects(relay) -> dict[str, dict]:
    listing = rest_json(relay, "GET", "/api/projects")
    return {p["name"]: p for p in listing["projects"]}


def start_project(relay, name: str, body: Any = MISSING, status: int = 200) -> dict:
    """The app's `POST /api/projects/:name/start` (Content-Type json, body none or an object)."""
    return rest_json(relay, "POST", f"/api/projects/{quote(name)}/start", status=status, body=body,
                     headers={"Content-Type": "application/json"})


def companion_devices(relay) -> list[dict]:
    return [d for d in relay.devices() if d.get("protocol") == "companion"]


def same_device(actual: Any, sent: str) -> bool:
    """The relay's id for a device that sent `x-device-id: sent` (the relay may namespace it: `companion:<id>`)."""
    return isinstance(actual, str) and actual in (sent, f"companion:{sent}")


def presence_of(relay, device_id: str) -> str | None:
    for d in companion_devices(relay):
        if same_device(d.get("deviceId"), device_id):
            return d.get("presence")
    return None


# --------------------------------------------------------------------------------------------
# the WebSocket client


def new_request_id() -> str:
    return str(uuid.uuid4()).upper()  # the app's UUID().uuidString


def app_timestamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")  # ISO8601DateFormatter() default


class CompanionClient:
    def __init__(self, ws, name: str):
        self.ws = ws
        self.name = name
        self.frames: list[dict] = []  # every frame received, in order
        self.queue: asyncio.Queue = asyncio.Queue()
        self.close_code: int | None = None
        self.close_reason: str = ""
        self.closed = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, relay, token: str | None = TOKEN, auth: str = "query", device_id: str | None = None,
                      user_agent: str | None = None, path: str = "/ws", name: str = "companion",
                      welcome: bool = True) -> "CompanionClient":
        """Open a socket; `auth` "query" is the app's `?token=`, "bearer" the header form."""
        headers = {}
        url = f"ws://127.0.0.1:{cport(relay)}{path}"
        if token is not None and auth == "query":
            url += "?token=" + quote(token)
        if token is not None and auth == "bearer":
            headers["Authorization"] = f"Bearer {token}"
        if device_id is not None:
            headers["x-device-id"] = device_id
        ws = await ws_connect(url, additional_headers=headers, user_agent_header=user_agent, compression=None,
                              ping_interval=None, max_size=None, proxy=None, open_timeout=10, close_timeout=2)
        client = cls(ws, name)
        conftest._OPEN_CLIENTS.append(client)
        if welcome:
            client.welcome = await client.expect("welcome")
        return client

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                try:
                    frame = json.loads(raw)
                except (TypeError, ValueError):
                    frame = {"_unparsable": raw if isinstance(raw, str) else repr(raw)}
                    DECODE_PROBLEMS.append(f"[{self.name}] a server frame is not JSON: {raw!r:.200}")
                else:
                    DECODE_PROBLEMS.extend(f"[{self.name}] {p} in {json.dumps(frame)[:400]}" for p in decode_problems(frame))
                self.frames.append(frame)
                await self.queue.put(frame)
        except ConnectionClosed:
            pass
        finally:
            self.close_code = self.ws.close_code  # 1006 when the TCP connection dropped without a close frame
            self.close_reason = self.ws.close_reason or ""
            self.closed.set()
            await self.queue.put(None)

    # -- sending

    async def send(self, type_: str, data: Any = MISSING, request_id: Any = MISSING) -> str | None:
        """An app envelope; returns its requestId (a fresh uppercase UUID unless given; None = omitted)."""
        rid = new_request_id() if request_id is MISSING else request_id
        frame: dict[str, Any] = {"type": type_, "timestamp": app_timestamp(), "data": {} if data is MISSING else data}
        if rid is not None:
            frame["requestId"] = rid
        await self.ws.send(json.dumps(frame))
        return rid

    async def send_raw(self, obj: Any) -> None:
        await self.ws.send(obj if isinstance(obj, str) else json.dumps(obj))

    async def background(self, session_id: str = "") -> None:
        """The app's bare frame, 3 s after it left the foreground: no envelope, no requestId, no data."""
        await self.send_raw({"type": "client_backgrounding", "sessionId": session_id, "timestamp": app_timestamp()})

    # -- receiving

    async def recv(self, timeout: float = 5.0) -> dict:
        try:
            frame = await asyncio.wait_for(self.queue.get(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"[{self.name}] no frame within {timeout}s; last frames: {self.frames[-8:]}") from None
        if frame is None:
            await self.queue.put(None)
            raise AssertionError(f"[{self.name}] socket closed ({self.close_code} {self.close_reason!r}); frames: {self.frames[-8:]}")
        return frame

    async def recv_until(self, pred: Callable[[dict], bool], timeout: float = 10.0) -> tuple[dict, list[dict]]:
        """Read until `pred(frame)`; returns (the frame, the frames read before it)."""
        deadline = time.monotonic() + timeout
        skipped: list[dict] = []
        while True:
            left = deadline - time.monotonic()
            try:
                frame = await self.recv(max(left, 0.001))
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n[{self.name}] waited {timeout}s for a match; read: {skipped}") from None
            if pred(frame):
                return frame, skipped
            skipped.append(frame)

    async def expect(self, type_: str, timeout: float = 5.0, request_id: Any = MISSING) -> dict:
        frame = await self.recv(timeout)
        assert frame.get("type") == type_, f"[{self.name}] expected {type_}, got {frame}"
        if request_id is not MISSING:
            assert frame.get("requestId") == request_id, f"[{self.name}] expected requestId {request_id!r}: {frame}"
        return frame

    async def request(self, type_: str, data: Any = MISSING, timeout: float = 10.0) -> tuple[dict, list[dict]]:
        """Send; return the FIRST frame carrying the request's requestId, and the frames before it."""
        rid = await self.send(type_, data)
        return await self.recv_until(lambda f: f.get("requestId") == rid, timeout)

    async def expect_error(self, type_: str, data: Any, code: str, timeout: float = 5.0) -> dict:
        reply, _ = await self.request(type_, data, timeout)
        assert_error(reply, code)
        return reply

    async def expect_silence(self, duration: float, ignore: Callable[[dict], bool] | None = None) -> list[dict]:
        """Absence check: nothing (not ignored) arrives within `duration` seconds."""
        deadline = time.monotonic() + duration
        ignored = []
        while (left := deadline - time.monotonic()) > 0:
            try:
                frame = await asyncio.wait_for(self.queue.get(), left)
            except asyncio.TimeoutError:
                break
            if frame is None:
                await self.queue.put(None)
                break
            if ignore and ignore(frame):
                ignored.append(frame)
                continue
            raise AssertionError(f"[{self.name}] expected silence, got {frame}")
        return ignored

    async def expect_close(self, timeout: float = 5.0) -> tuple[int | None, str, list[dict]]:
        """Wait for the server's close; returns (code, reason, frames received on this socket)."""
        try:
            await asyncio.wait_for(self.closed.wait(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"[{self.name}] still open after {timeout}s; frames: {self.frames}") from None
        return self.close_code, self.close_reason, list(self.frames)

    async def assert_open(self) -> None:
        reply, _ = await self.request("ping", {})
        assert reply["type"] == "pong", reply

    async def subscribe(self, *session_ids: str, events=("streamData", "streamComplete", "toolUse", "toolResult",
                                                          "assistantMessage")) -> tuple[dict, list[dict]]:
        """The app's subscribe; returns (subscribed, frames before it)."""
        reply, before = await self.request("subscribe", {"events": list(events), "sessionIds": list(session_ids)})
        assert reply["type"] == "subscribed", reply
        return reply, before

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), 3)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.reader, 3)


def assert_error(frame: dict, code: str) -> dict:
    assert frame.get("type") == "error", f"expected error {code}, got {frame}"
    data = frame.get("data") or {}
    assert data.get("code") == code, f"expected data.code {code}: {frame}"
    assert isinstance(data.get("message"), str) and data["message"], frame
    assert "details" not in data or isinstance(data["details"], dict), frame
    err = frame.get("error")
    assert isinstance(err, dict) and err.get("code") == code and isinstance(err.get("message"), str), \
        f"the server form error:{{code, message}} goes along with data: {frame}"
    return frame


# --------------------------------------------------------------------------------------------
# one turn


def chunks_of(frames: list[dict], session_id: str | None = None) -> list[dict]:
    return [f["data"]["chunk"] for f in frames if f.get("type") == "streamChunk"
            and (session_id is None or f["data"].get("sessionId") == session_id)]


def result_of(session_id: str, result: str | None = None) -> Callable[[dict], bool]:
    """A predicate for the conversationResult of a session (optionally with this result text)."""
    def pred(f: dict) -> bool:
        d = f.get("data") or {}
        return (f.get("type") == "conversationResult" and d.get("sessionId") == session_id
                and (result is None or d.get("result") == result))
    return pred


@dataclass
class Turn:
    request_id: str
    reply: dict
    before: list[dict]  # frames on the asking socket between the send and the reply
    extra: list[dict] = field(default_factory=list)  # frames read after the reply (to see the turn's end)

    @property
    def frames(self) -> list[dict]:
        return self.before + [self.reply] + self.extra


async def claude_command(client: CompanionClient, text: str, session_id: str | None, project_path: str | None,
                         timeout: float = 20.0, see_result: bool = True) -> Turn:
    """The app's claudeCommand {command, projectPath, sessionId}; reads to the first frame with its requestId."""
    data: dict[str, Any] = {"command": text}
    if project_path is not None:
        data["projectPath"] = project_path
    if session_id is not None:
        data["sessionId"] = session_id
    rid = await client.send("claudeCommand", data)
    reply, before = await client.recv_until(lambda f: f.get("requestId") == rid, timeout)
    turn = Turn(rid, reply, before)
    sid = reply.get("data", {}).get("sessionId") or session_id
    if see_result and reply.get("type") == "claudeResponse" and reply["data"].get("success") is True:
        if not any(result_of(sid)(f) for f in before):
            frame, extra = await client.recv_until(result_of(sid), 10)
            turn.extra = extra + [frame]
    return turn
