"""A DiscoClaw test client; every response is checked against what the real Swift app decodes.

Source: timrudolph/discoclaw `client/Sources/ClawClient` at 871a5d7 (`Network/APITypes.swift`,
`Network/WsEvent.swift`), summarised in /work/shared/protocols/discoclaw.md. The app decodes each REST
body all-or-nothing and swallows the error: `decode(shape, value)` lists why it would drop a body and
`expect` asserts none for every response a test reads. Events are parsed like `WsEvent.parse`; the
autouse fixture `app_decodes_everything` (import it into each test module) fails a test whose sockets
received one the app drops. On top of the Swift types, the contract's rules: `*At`/`lastSeen` in Unix
ms, only the app's roles and statuses, one current device, no orphan in a `/sync`, the cursor rule.
"""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import quote

import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

import conftest
from conftest import HttpResponse, make_config

SETUP_TOKEN = "e2e-discoclaw-setup-0123456789"
STRANGER_TOKEN = "e2e-discoclaw-stranger-0123456789"  # another person's ([[discoclaw.users]]): user "stranger"
MISSING = object()
ORDER = itertools.count(1)  # one clock for "which arrived first" across HTTP bodies and socket frames

# --------------------------------------------------------------------------------------------
# the decoder


def _str(v): return isinstance(v, str)
def _int(v): return isinstance(v, int) and not isinstance(v, bool)
def _bool(v): return isinstance(v, bool)
def _ms(v): return _int(v) and 10**12 <= v < 10**14  # Unix milliseconds (seconds would be ~1.7e9)
def _role(v): return v in ("user", "assistant")
def _status(v): return v in ("pending", "streaming", "complete", "error")


LAST_MESSAGE = {"role": (_role, True), "content": (_str, True), "createdAt": (_ms, True)}
CONVERSATION = {"id": (_str, True), "title": (_str, False), "isProtected": (_bool, False), "kind": (_str, False),
                "modelOverride": (_str, False), "assistantName": (_str, False), "accentColor": (_str, False),
                "createdAt": (_ms, True), "updatedAt": (_ms, True), "archivedAt": (_ms, False)}
MESSAGE = {"id": (_str, True), "clientId": (_str, False), "conversationId": (_str, True), "role": (_role, True),
           "content": (_str, True), "status": (_status, True), "error": (_str, False), "seq": (_int, True),
           "createdAt": (_ms, True), "completedAt": (_ms, False), "sourceConversationId": (_str, False)}
DEVICE_ITEM = {"id": (_str, True), "name": (_str, False), "platform": (_str, False), "lastSeen": (_ms, False),
               "createdAt": (_ms, True), "isCurrent": (_bool, True)}
SHAPES: dict[str, Any] = {
    "health": {"ok": (_bool, True), "beadsEnabled": (_bool, False), "uptime": (_int, True), "connections": (_int, True)},
    "register": {"userId": (_str, True), "deviceId": (_str, True), "token": (_str, True)},
    "new_device": {"deviceId": (_str, True), "token": (_str, True)},
    "me": {"user": ({"id": (_str, True), "name": (_str, False)}, True),
           "device": ({"id": (_str, True), "name": (_str, False), "platform": (_str, False)}, True)},
    "devices": {"devices": ([DEVICE_ITEM], True)},
    "conversation_list": [{**CONVERSATION, "lastMessage": (LAST_MESSAGE, False)}],
    "conversation": {**CONVERSATION, "claudeSessionId": (_str, False)},
    "messages": {"messages": ([MESSAGE], True), "hasMore": (_bool, True)},
    "sent": {"id": (_str, True), "seq": (_int, True), "clientId": (_str, False), "status": (_str, True),
             "assistantMessageId": (_str, True), "sourceConversationId": (_str, False)},
    "sync": {"conversations": ([{**CONVERSATION, "claudeSessionId": (_str, False)}], True),
             "messages": ([MESSAGE], True), "cursor": (_int, True)},
    # error bodies: the register screen decodes [String: String]; the rest is the contract's form
    "string_error": {"error": (_str, True)},
    "http_error": {"statusCode": (_int, True), "error": (_str, True), "message": (_str, True)},
}
EVENTS = {  # WsEvent.parse: `as? String` / `as? Int` on each field
    "message.delta": {"messageId": _str, "conversationId": _str, "delta": _str, "seq": _int},
    "message.complete": {"messageId": _str, "conversationId": _str, "content": _str, "seq": _int},
    "message.error": {"messageId": _str, "conversationId": _str, "error": _str},
    "tool.start": {"messageId": _str, "tool": _str, "label": _str},
    "tool.end": {"messageId": _str, "tool": _str},
    "conversation.updated": {"conversationId": _str},
    "beads.updated": {},
}


def _check(value: Any, spec: Any, where: str, out: list[str]) -> None:
    """JSONDecoder's rules: a required key may be neither absent nor null; an optional one may be either."""
    if not isinstance(value, type(spec)):
        out.append(f"{where} must be {'an array' if isinstance(spec, list) else 'an object'}, got {type(value).__name__}")
    elif isinstance(spec, list):
        for i, item in enumerate(value):
            _check(item, spec[0], f"{where}[{i}]", out)
    else:
        for key, (check, required) in spec.items():
            if value.get(key) is None:
                if required:
                    out.append(f"{where}.{key} is required")
            elif callable(check):
                if not check(value[key]):
                    out.append(f"{where}.{key} has the wrong type or value: {value[key]!r}")
            else:
                _check(value[key], check, f"{where}.{key}", out)


def decode(shape: str, value: Any) -> list[str]:
    """Why the app would drop (or the contract refuses) this body; [] when it decodes."""
    out: list[str] = []
    _check(value, SHAPES[shape], shape, out)
    if shape == "string_error" and isinstance(value, dict):
        out += [f"string_error.{k} must be a string (decoded as [String:String])" for k, v in value.items() if not _str(v)]
    if shape == "devices" and not out and sum(d["isCurrent"] for d in value["devices"]) != 1:
        out.append("devices: exactly one isCurrent (the caller)")
    return out


def event_problems(raw: Any) -> list[str]:
    if not isinstance(raw, str):
        return [f"a binary frame (the app reads text frames only): {raw!r:.100}"]
    try:
        frame = json.loads(raw)
    except ValueError:
        return [f"not JSON: {raw!r:.200}"]
    kind = frame.get("type") if isinstance(frame, dict) else None
    if kind not in EVENTS:
        return [f"unknown event type {kind!r} (WsEvent.parse drops it): {raw:.200}"]
    return [f"{kind}.{k} has the wrong type: {frame.get(k)!r}" for k, ok in EVENTS[kind].items() if not ok(frame.get(k))]


DECODE_PROBLEMS: list[str] = []


@pytest.fixture(autouse=True)
def app_decodes_everything():
    """Fails the test if any socket received an event the app's WsEvent.parse would drop."""
    DECODE_PROBLEMS.clear()
    yield
    problems, DECODE_PROBLEMS[:] = list(DECODE_PROBLEMS), []
    if problems:
        pytest.fail("events the real app would drop:\n" + "\n".join(problems[:40]), pytrace=False)


# --------------------------------------------------------------------------------------------
# config and HTTP


def discoclaw_config(echo: dict | None = None, cmd: dict | None = None, **section: Any) -> dict:
    """The default config plus `[discoclaw]` on port 0 with a stranger's setup token besides the listener's
    (a None value removes a key, e.g. setup_token=None)."""
    cfg = make_config(echo=echo, cmd=cmd)
    stranger = [{"setup_token": STRANGER_TOKEN, "user_id": "stranger"}]
    body: dict[str, Any] = {"listen": "127.0.0.1:0", "setup_token": SETUP_TOKEN, "backend": "echo", "users": stranger, **section}
    cfg["discoclaw"] = {k: v for k, v in body.items() if v is not None}
    return cfg


def write_config(relay, cfg: dict) -> None:
    relay.config = cfg
    relay.config_path.write_text(conftest.render_toml(cfg))


def dport(relay) -> int:
    assert "discoclaw" in relay.listeners, f"ready line has no discoclaw listener: {relay.ready_line!r}"
    return relay.listeners["discoclaw"][1]


def _request_parts(path: str, body: Any, token: str | None, auth: str, raw: bytes | None, headers: dict | None):
    hdrs = dict(headers or {}) | ({"Authorization": f"Bearer {token}"} if token is not None and auth == "bearer" else {})
    if token is not None and auth == "query":
        path += ("&" if "?" in path else "?") + "token=" + quote(token)
    if body is not MISSING:
        raw = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    return path, raw, hdrs


def http(relay, method: str, path: str, body: Any = MISSING, token: str | None = None, auth: str = "bearer",
         raw: bytes | None = None, headers: dict | None = None) -> HttpResponse:
    """One request to the DiscoClaw listener; `auth` is "bearer" (the app's REST form) or "query"."""
    path, data, hdrs = _request_parts(path, body, token, auth, raw, headers)
    return relay.http(method, path, body=data, headers=hdrs, port=dport(relay))


async def ahttp(relay, method: str, path: str, body: Any = MISSING, token: str | None = None,
                auth: str = "bearer") -> tuple[HttpResponse, int]:
    """The same on the event loop; also returns the ORDER stamp taken when the whole body had arrived."""
    path, data, hdrs = _request_parts(path, body, token, auth, None, None)
    data = data or b""
    reader, writer = await asyncio.open_connection("127.0.0.1", dport(relay))
    try:
        # asyncio.timeout, not wait_for: no extra task, so this task wakes in the same loop step as the
        # data's arrival, exactly like a socket's reader; the loop handles sockets in readiness order
        async with asyncio.timeout(15):
            head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {len(data)}\r\n"
            writer.write(head.encode() + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()).encode() + b"\r\n" + data)
            await writer.drain()
            lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
            payload = await reader.readexactly(int(headers.get("content-length", "0")))
        return HttpResponse(int(lines[0].split()[1]), headers, payload), next(ORDER)
    finally:
        writer.close()


def expect(resp: HttpResponse, status: int, shape: str | None, what: str) -> Any:
    """Assert the status, then that the app decodes the body as `shape` (None: no body expected)."""
    assert resp.status == status, f"{what}: expected {status}, got {resp.status} {resp.body[:400]!r}"
    if shape is None:
        return None
    assert resp.headers.get("content-type", "").startswith("application/json"), (what, resp.headers)
    value = json.loads(resp.body)
    problems = decode(shape, value)
    assert not problems, f"{what}: the app would drop this {shape} body: {problems}\n{json.dumps(value)[:600]}"
    return value


# --------------------------------------------------------------------------------------------
# a device, with the app's local sync state


@dataclass
class Device:
    relay: Any
    user_id: str
    device_id: str
    token: str
    cursor: int = 0
    conversations: set = field(default_factory=set)  # ids the app's SQLite holds (foreign key of messages)
    last_order: int = 0

    def call(self, method: str, path: str, body: Any = MISSING, status: int = 200, shape: str | None = None,
             auth: str = "bearer") -> Any:
        resp = http(self.relay, method, path, body, token=self.token, auth=auth)
        return expect(resp, status, shape, f"{method} {path}")

    async def acall(self, method: str, path: str, body: Any = MISSING, status: int = 200, shape: str | None = None) -> Any:
        resp, self.last_order = await ahttp(self.relay, method, path, body, token=self.token)
        return expect(resp, status, shape, f"{method} {path}")

    def create_conversation(self, title: str | None = "chat", **extra) -> dict:
        body = {"title": title, **extra} if title is not None else dict(extra)
        return self.call("POST", "/conversations", body, 201, "conversation")

    def sync(self, since: int | None = None) -> dict:
        """The app's `/sync?since=<cursor>`: checks the orphan and cursor rules, then stores the cursor."""
        since = self.cursor if since is None else since
        body = self.call("GET", f"/sync?since={since}", shape="sync")
        returned = {c["id"] for c in body["conversations"]}
        orphans = [m for m in body["messages"] if m["conversationId"] not in returned]
        assert not orphans, f"every message's conversation comes in the same /sync (an orphan aborts the batch): {orphans}"
        seqs = [m["seq"] for m in body["messages"]]
        assert all(s > since for s in seqs), f"/sync?since={since} returned older messages: {seqs}"
        if seqs:
            assert body["cursor"] == max(seqs), f"cursor must be the highest seq returned: {body['cursor']} vs {seqs}"
        else:
            assert body["cursor"] >= since, f"cursor went back from {since}: {body['cursor']}"
        self.conversations |= returned
        self.cursor = body["cursor"]
        return body

    async def async_sync(self, since: int | None = None) -> dict:
        return await asyncio.to_thread(self.sync, since)

    async def post_message(self, conv_id: str, content: str, client_id: str | None = None) -> dict:
        body = {"content": content} | ({"clientId": client_id} if client_id is not None else {})
        return await self.acall("POST", f"/conversations/{conv_id}/messages", body, 201, "sent")


def register(relay, name: str | None = "iPhone", platform: str = "ios", setup: str = SETUP_TOKEN) -> Device:
    body = {"platform": platform, "setupToken": setup} | ({"name": name} if name else {})  # a blank name is left out
    reg = expect(http(relay, "POST", "/auth/register", body), 201, "register", "POST /auth/register")
    return Device(relay, reg["userId"], reg["deviceId"], reg["token"])


def register_stranger(relay, name: str = "stranger's phone") -> Device:
    """A device of another person (the config's [[discoclaw.users]] entry): not the listener's user."""
    return register(relay, name=name, setup=STRANGER_TOKEN)


def add_device(dev: Device, name: str = "Mac", platform: str = "macos") -> Device:
    new = dev.call("POST", "/auth/devices", {"name": name, "platform": platform}, 201, "new_device")
    return Device(dev.relay, dev.user_id, new["deviceId"], new["token"])


def new_client_id() -> str:
    return str(uuid.uuid4()).upper()  # the app's UUID().uuidString


# --------------------------------------------------------------------------------------------
# the WebSocket (receive-only)


class Socket:
    def __init__(self, ws, name: str):
        self.ws, self.name, self.queue, self.closed = ws, name, asyncio.Queue(), asyncio.Event()
        self.log: list[tuple[int, dict]] = []  # (ORDER stamp, event) for every frame, in arrival order
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, relay, token: str | None, auth: str = "query", name: str = "ws") -> "Socket":
        """`auth` "query" is the app's `/ws?token=T`; "bearer" the header form."""
        url = f"ws://127.0.0.1:{dport(relay)}/ws" + (f"?token={quote(token)}" if token is not None and auth == "query" else "")
        headers = {"Authorization": f"Bearer {token}"} if token is not None and auth == "bearer" else {}
        ws = await ws_connect(url, additional_headers=headers, compression=None, ping_interval=None, max_size=None,
                              proxy=None, open_timeout=10, close_timeout=2)
        sock = cls(ws, name)
        conftest._OPEN_CLIENTS.append(sock)
        return sock

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                DECODE_PROBLEMS.extend(f"[{self.name}] {p}" for p in event_problems(raw))
                with contextlib.suppress(ValueError, TypeError):
                    frame = json.loads(raw)
                    self.log.append((next(ORDER), frame))
                    await self.queue.put(frame)
        except ConnectionClosed:  # the server closed (or dropped) the socket
            pass
        finally:
            self.closed.set()
            await self.queue.put(None)

    @property
    def events(self) -> list[dict]:
        return [f for _, f in self.log]

    async def recv(self, timeout: float = 5.0) -> dict:
        try:
            frame = await asyncio.wait_for(self.queue.get(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"[{self.name}] no event within {timeout}s; last: {self.events[-8:]}") from None
        if frame is None:
            await self.queue.put(None)
            raise AssertionError(f"[{self.name}] socket closed ({self.ws.close_code}); events: {self.events[-8:]}")
        return frame

    async def recv_until(self, pred: Callable[[dict], bool], timeout: float = 10.0) -> tuple[dict, list[dict]]:
        deadline, skipped = time.monotonic() + timeout, []
        while True:
            try:
                frame = await self.recv(max(deadline - time.monotonic(), 0.001))
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n[{self.name}] no match within {timeout}s; read: {skipped}") from None
            if pred(frame):
                return frame, skipped
            skipped.append(frame)

    async def expect_silence(self, duration: float) -> None:
        """Absence check: no event within `duration` (kept short by the callers)."""
        with contextlib.suppress(asyncio.TimeoutError):
            frame = await asyncio.wait_for(self.queue.get(), duration)
            assert frame is None, f"[{self.name}] expected no event, got {frame}"
            await self.queue.put(None)

    async def expect_close(self, timeout: float = 5.0) -> None:
        try:
            await asyncio.wait_for(self.closed.wait(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"[{self.name}] still open after {timeout}s; events: {self.events}") from None

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), 3)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.reader, 3)


def of(kind: str, message_id: str | None = None, conversation_id: str | None = None) -> Callable[[dict], bool]:
    """A predicate: an event of this type (for this message / conversation)."""
    return lambda f: (f.get("type") == kind and (message_id is None or f.get("messageId") == message_id)
                      and (conversation_id is None or f.get("conversationId") == conversation_id))


@dataclass
class Turn:
    sent: dict  # the POST 201 body
    sent_order: int  # ORDER stamp of its arrival
    deltas: list[dict]
    complete: dict
    frames: list[dict]  # everything the socket read up to the complete


async def turn(dev: Device, sock: Socket, conv_id: str, content: str, client_id: str | None = None,
               timeout: float = 10.0) -> Turn:
    """POST a message, then read `sock` to the answer's message.complete. (An answer that ended while the
    sender's socket held it is announced again with conversation.updated ~2 s after the 201.)"""
    sent = await dev.post_message(conv_id, content, client_id)
    order = dev.last_order
    complete, before = await sock.recv_until(of("message.complete", sent["assistantMessageId"]), timeout)
    deltas = [f for f in before if of("message.delta", sent["assistantMessageId"])(f)]
    return Turn(sent, order, deltas, complete, before + [complete])


# --------------------------------------------------------------------------------------------
# the app's local store and how it applies what it hears


class App:
    """The DiscoClaw app as `ChatViewModel.send` and `SyncEngine.applyEvent` (871a5d7) behave: after the
    201 it decodes the reply and writes two SQLite rows (`confirmOptimistic`, then `saveIfAbsent` of the
    answer's placeholder), which take `insert_delay` seconds; `message.delta`/`message.complete` about a
    row it does not have change nothing but still move the sync cursor to their seq; `message.error`
    upserts; `conversation.updated` starts a `/sync?since=<cursor>` (read when the event is handled) whose
    messages are upserted, while later events go on being handled. Events are handled in arrival order."""

    def __init__(self, dev: Device, sock: Socket, insert_delay: float = 0.02):
        self.dev, self.sock, self.insert_delay = dev, sock, insert_delay
        self.rows: dict[str, dict] = {}
        self.cursor = 0
        self.syncs: set[asyncio.Task] = set()
        self.dropped: list[dict] = []  # events about rows the app did not have yet
        self.duplicates: list[str] = []  # optimistic user rows left beside their synced copy
        self.handler = asyncio.create_task(self._handle_events())

    async def send(self, conv_id: str, content: str) -> dict:
        client_id = new_client_id()
        self.rows[client_id] = {"status": "pending", "content": content}  # the optimistic row
        sent = await self.dev.post_message(conv_id, content, client_id)
        await asyncio.sleep(self.insert_delay)  # models the app's decode and SQLite writes, not a wait for the relay
        if sent["id"] in self.rows:  # a /sync stored it first: renaming the optimistic row fails, a duplicate stays
            self.duplicates.append(client_id)
        else:
            self.rows[sent["id"]] = self.rows.pop(client_id) | {"status": "streaming"}  # confirmOptimistic
        self.rows.setdefault(sent["assistantMessageId"], {"status": "streaming", "content": ""})  # saveIfAbsent
        return sent

    def shown(self, answer_id: str) -> str | None:
        """The answer's text once its row is complete."""
        row = self.rows.get(answer_id)
        return row["content"] if row and row["status"] == "complete" else None

    def _advance(self, seq: int) -> None:
        self.cursor = max(self.cursor, seq)

    async def _handle_events(self) -> None:
        while (frame := await self.sock.queue.get()) is not None:
            kind, row = frame.get("type"), self.rows.get(frame.get("messageId", ""))
            if kind in ("message.delta", "message.complete") and row is None:
                self.dropped.append(frame)
            if kind == "message.delta":
                if row is not None:
                    row["content"] += frame["delta"]
                self._advance(frame["seq"])
            elif kind == "message.complete":
                if row is not None and row["status"] != "error":
                    row.update(status="complete", content=frame["content"])
                self._advance(frame["seq"])
            elif kind == "message.error":
                self.rows[frame["messageId"]] = {"status": "error", "content": (row or {}).get("content", "")}
            elif kind == "conversation.updated":
                task = asyncio.create_task(self._sync(self.cursor))
                self.syncs.add(task)
                task.add_done_callback(self.syncs.discard)
        await self.sock.queue.put(None)

    async def _sync(self, since: int) -> None:
        body = await asyncio.to_thread(self.dev.sync, since)
        for message in body["messages"]:
            self.rows[message["id"]] = {"status": message["status"], "content": message["content"]}
        self._advance(body["cursor"])
