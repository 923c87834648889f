"""Relay A's `companion` backend is a client of a Claude Companion server.

The server is relay B's `[companion]` listener (answering with echo), or a small fake here that
speaks the real Node server's dialect (dock108/aicli-companion): `streamStart` replies typed as the
request, `error` frames without `data`, `requestId: null` broadcasts.
"""
import asyncio
import json
import time
from datetime import datetime, timezone
from urllib.parse import parse_qs, urlparse

from websockets.asyncio.server import serve

from conftest import accounts, is_assistant_final, make_config, message_frame, render_toml, send_and_complete, setup_admin, wait_account

TOKEN = "e2eCompanionToken_0123456789abcd"  # 32 characters from the app's URL-safe alphabet




def relay_a_config(url: str, token: str, working_directory: str | None) -> dict:
    cfg = make_config(clawline={"backend": "up"})
    cfg["server"] = {"log_level": "debug"}
    backend = {"name": "up", "kind": "companion", "url": url, "token": token}
    if working_directory:
        backend["working_directory"] = working_directory
    cfg["backends"].append(backend)
    return cfg


def companion_port(relay) -> int:
    if "companion" in relay.listeners:
        return relay.listeners["companion"][1]
    listeners = json.loads((relay.data_dir / "listeners.json").read_text())
    return int(listeners["companion"].rsplit(":", 1)[1])


def start_b(relay_factory, tmp_path, port: int = 0):
    projects = tmp_path / "projects"
    (projects / "app").mkdir(parents=True, exist_ok=True)
    cfg = make_config()
    cfg["companion"] = {"listen": f"127.0.0.1:{port}", "auth_token": TOKEN, "projects_root": str(projects), "backend": "echo"}
    return relay_factory(cfg), projects


def assert_no_secret(relay, *secrets: str) -> None:
    audit = relay.cli("audit", "--json").stdout
    listed = relay.cli("accounts", "--json").stdout
    for secret in secrets:
        assert secret not in relay.stderr_text(), "the token leaked into the log"
        assert secret not in audit, "the token leaked into the audit"
        assert secret not in listed, "the token leaked into the account detail"


# --------------------------------------------------------------------------------------------
# against relay B's [companion] listener


async def test_clawline_chat_through_a_reaches_bs_echo_and_a_heals_when_b_restarts(relay_factory, tmp_path):
    relay_b, projects = start_b(relay_factory, tmp_path)
    b_port = companion_port(relay_b)
    relay_a = relay_factory(relay_a_config(f"ws://127.0.0.1:{b_port}/ws", TOKEN, str(projects / "app")))
    connected = await asyncio.to_thread(wait_account, relay_a, "connected")
    assert connected["kind"] == "companion" and f"127.0.0.1:{b_port}" in connected["detail"], connected

    _, client = await setup_admin(relay_a)
    exchange = await send_and_complete(client, "through two relays")
    assert exchange.final["content"] == "echo: through two relays"

    # B comes back on the same port: A notices, retries and heals without a restart.
    relay_b.config["companion"]["listen"] = f"127.0.0.1:{b_port}"
    relay_b.config_path.write_text(render_toml(relay_b.config))
    assert relay_b.terminate() == 0
    down = await asyncio.to_thread(wait_account, relay_a, {"retrying", "connecting"})
    assert TOKEN not in down["detail"], down
    await client.send_json(message_frame("while b is down"))
    error, _ = await client.recv_until(lambda f: f.get("type") == "error", timeout=10)
    assert error["code"] == "server_error", error
    relay_b.start()
    assert companion_port(relay_b) == b_port
    await asyncio.to_thread(wait_account, relay_a, "connected", 40)
    await send_and_complete(client, "b is back")
    await asyncio.to_thread(assert_no_secret, relay_a, TOKEN)


async def test_a_wrong_token_shows_bad_credentials_and_never_leaks(relay_factory, tmp_path):
    relay_b, projects = start_b(relay_factory, tmp_path)
    wrong = "wrongToken_" + "x" * 21
    relay_a = relay_factory(relay_a_config(f"ws://127.0.0.1:{companion_port(relay_b)}/ws", wrong, str(projects / "app")))
    refused = await asyncio.to_thread(wait_account, relay_a, "bad_credentials")
    assert "refused the token" in refused["detail"], refused
    _, client = await setup_admin(relay_a)
    await client.send_json(message_frame("not through"))
    error, _ = await client.recv_until(lambda f: f.get("type") == "error", timeout=10)
    assert error["code"] == "server_error", error
    assert "the link to up is bad_credentials" in relay_a.stderr_text()
    await asyncio.to_thread(assert_no_secret, relay_a, wrong, TOKEN)


# --------------------------------------------------------------------------------------------
# against a fake in the real Node server's dialect


def iso_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class NodeCompanion:
    """A Companion server in the real server's dialect; answers `claudeCommand` with two paragraphs."""

    SESSION = "3f1c2b8e-5d6a-4e7f-9a0b-1c2d3e4f5a6b"

    def __init__(self, token: str):
        self.token = token
        self.frames: list[dict] = []
        self.paths: list[str] = []
        self.connections = 0
        self.port = 0

    async def start(self) -> "NodeCompanion":
        self.server = await serve(self.handle, "127.0.0.1", 0, ping_interval=None, compression=None)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def send(self, ws, type_: str, request_id, data: dict | None = None, **extra) -> None:
        frame = {"type": type_, "requestId": request_id, "timestamp": iso_now(), **extra}
        if data is not None:
            frame["data"] = data
        await ws.send(json.dumps(frame))

    async def handle(self, ws) -> None:
        self.paths.append(ws.request.path)
        if parse_qs(urlparse(ws.request.path).query).get("token", [""])[0] != self.token:
            await ws.close(1008, "Authentication required")
            return
        self.connections += 1
        await self.send(ws, "welcome", None, {
            "clientId": "c-1", "serverVersion": "1.0.0", "claudeCodeVersion": None,
            "capabilities": ["chat", "streaming"], "maxSessions": 10})
        async for raw in ws:
            frame = json.loads(raw)
            self.frames.append(frame)
            await self.answer(ws, frame)

    async def answer(self, ws, frame: dict) -> None:
        kind, rid, data = frame.get("type"), frame.get("requestId"), frame.get("data") or {}
        if kind == "ping":
            await self.send(ws, "pong", rid, {"serverTime": iso_now()})
        elif kind == "streamStart":
            await self.send(ws, "streamStart", rid, {"success": True, "sessionId": self.SESSION, "message": "ok", "timestamp": iso_now()})
        elif kind == "subscribe":
            await self.send(ws, "subscribe", rid, {"success": True, "subscribedEvents": data.get("events"), "sessionIds": data.get("sessionIds")})
        elif kind == "claudeCommand":
            command = data["command"]
            await self.send(ws, "processStart", None, {"sessionId": self.SESSION, "pid": 4242})
            if command == "fail":
                await self.send(ws, "error", rid, None, error={"code": "COMMAND_FAILED", "message": "AICLI Code execution failed: boom"})
                return
            if command == "drop":
                await ws.close(1011, "gone")
                return
            for n, text in enumerate(["You said:", command]):
                chunk = {"id": f"chunk-{n}", "type": "text", "content": text, "timestamp": iso_now(), "isFinal": False}
                await self.send(ws, "streamChunk", None, {"sessionId": self.SESSION, "chunk": chunk, "isFinal": False})
                await asyncio.sleep(0.05)
            complete = {"id": "chunk-2", "type": "complete", "content": "", "timestamp": iso_now(), "isFinal": True}
            await self.send(ws, "streamChunk", None, {"sessionId": self.SESSION, "chunk": complete, "isFinal": True})
            await self.send(ws, "claudeResponse", rid, {
                "content": f"You said:\n\n{command}", "success": True, "sessionId": self.SESSION, "error": None})


async def test_the_real_servers_dialect_streams_answers_fails_and_reconnects(relay_factory, tmp_path):
    server = await NodeCompanion(TOKEN).start()
    workdir = str(tmp_path / "work")
    relay_a = relay_factory(relay_a_config(f"ws://127.0.0.1:{server.port}/ws", TOKEN, workdir))
    try:
        await asyncio.to_thread(wait_account, relay_a, "connected")
        _, client = await setup_admin(relay_a)

        await client.send_json(message_frame("hi there"))
        final, frames = await client.recv_until(is_assistant_final("You said:\n\nhi there"), timeout=10)
        streamed = [f["content"] for f in frames if f.get("type") == "message" and f.get("role") == "assistant" and f.get("streaming")]
        assert "You said:" in streamed, frames

        starts = [f for f in server.frames if f["type"] == "streamStart"]
        commands = [f for f in server.frames if f["type"] == "claudeCommand"]
        assert len(starts) == 1 and starts[0]["data"]["workingDirectory"] == workdir, starts
        assert commands[0]["data"] == {"command": "hi there", "projectPath": workdir, "sessionId": NodeCompanion.SESSION}
        assert all(isinstance(f.get("requestId"), str) and f["requestId"] for f in server.frames)
        assert server.paths[0] == f"/ws?token={TOKEN}"

        await send_then_final(client, "again", "You said:\n\nagain")
        assert len([f for f in server.frames if f["type"] == "streamStart"]) == 1, "one session per directory"

        await client.send_json(message_frame("fail"))
        error, _ = await client.recv_until(lambda f: f.get("type") == "error", timeout=10)
        assert error["code"] == "server_error", error
        assert "AICLI Code execution failed: boom" in relay_a.stderr_text()

        await client.send_json(message_frame("drop"))
        error, _ = await client.recv_until(lambda f: f.get("type") == "error", timeout=10)
        assert "the link to up dropped" in relay_a.stderr_text()
        deadline = time.monotonic() + 20
        while server.connections < 2:
            assert time.monotonic() < deadline, "A never came back"
            await asyncio.sleep(0.1)
        await asyncio.to_thread(wait_account, relay_a, "connected")
        await send_then_final(client, "healed", "You said:\n\nhealed")
        assert len([f for f in server.frames if f["type"] == "streamStart"]) == 2, "a new connection opens its session again"
        await asyncio.to_thread(assert_no_secret, relay_a, TOKEN)
    finally:
        await server.stop()


async def test_the_real_servers_1008_is_bad_credentials(relay_factory):
    server = await NodeCompanion(TOKEN).start()
    try:
        relay_a = relay_factory(relay_a_config(f"ws://127.0.0.1:{server.port}/ws", "not-the-token-at-all", None))
        refused = await asyncio.to_thread(wait_account, relay_a, "bad_credentials")
        assert "not-the-token" not in refused["detail"], refused
        assert server.connections == 0
    finally:
        await server.stop()


async def send_then_final(client, text: str, answer: str) -> dict:
    await client.send_json(message_frame(text))
    final, _ = await client.recv_until(is_assistant_final(answer), timeout=10)
    return final
