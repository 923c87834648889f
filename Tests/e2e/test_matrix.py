"""Every client protocol reaches every backend kind: one turn per (client protocol, backend kind).

Relay D fronts seven backends; the four upstream kinds are accounts on a second relay U (its
gateway, Clawline, Companion and DiscoClaw listeners), whose backend for each listener prefixes
the answer with the listener's name, so each answer shows the path it took. Each client picks
the backend its own way: Clawline with the `/backend NAME` relay command, a gateway operator with
a `backend:NAME:` session key, Companion by working directory (`[[companion.routes]]`), DiscoClaw
with `POST /conversations {backend}`. README's "client protocol × backend" table is this matrix.
"""
from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest

import discoclaw_client as dc
from claude_cli import bundled_cli, claude_backend
from companion_client import TOKEN as COMPANION_TOKEN, CompanionClient, claude_command
from conftest import Relay, auth, is_assistant_final, message_frame, pair_first_admin, wait_account
from fake_anthropic import FakeAnthropic
from gateway_client import Identity, paired

KINDS = ["echo", "command", "claude-code", "openclaw", "clawline", "companion", "discoclaw"]
CLIENTS = ["clawline", "gateway", "companion", "discoclaw"]
ANSWER = {
    "echo": "echo: {}", "command": "cmd: {}", "claude-code": "claude: {}", "openclaw": "u-gateway: {}",
    "clawline": "u-clawline: {}", "companion": "u-companion: {}", "discoclaw": "u-discoclaw: {}",
}


def prefixing(name: str) -> dict:
    return {"name": name, "kind": "command", "command": ["/bin/sh", "-c", f"printf '{name}: '; cat"], "timeout_seconds": 30}


class Matrix:
    """The two relays, started once for the module, and what the clients need to reach D."""

    def __init__(self, root: Path):
        projects_u = root / "u-projects" / "app"
        projects_u.mkdir(parents=True)
        self.upstream = Relay(root / "u", {
            "admin": {"listen": "127.0.0.1:0"},
            "gateway": {"listen": "127.0.0.1:0", "backend": "u-gateway"},
            "clawline": {"listen": "127.0.0.1:0", "backend": "u-clawline"},
            "companion": {"listen": "127.0.0.1:0", "auth_token": COMPANION_TOKEN, "backend": "u-companion",
                          "projects_root": str(projects_u.parent)},
            "discoclaw": {"listen": "127.0.0.1:0", "setup_token": dc.SETUP_TOKEN, "backend": "u-discoclaw"},
            "backends": [prefixing(n) for n in ("u-gateway", "u-clawline", "u-companion", "u-discoclaw")],
        }).start()
        port = {name: address[1] for name, address in self.upstream.listeners.items()}
        self.anthropic = FakeAnthropic()  # what the real Claude Code CLI calls
        self.projects = root / "d-projects"
        for kind in KINDS:
            (self.projects / kind).mkdir(parents=True)
        self.relay = Relay(root / "d", {
            "admin": {"listen": "127.0.0.1:0"},
            "clawline": {"listen": "127.0.0.1:0", "backend": "echo", "messages_per_second": 100, "auth_attempts_per_minute": 100},
            "gateway": {"listen": "127.0.0.1:0"},
            "companion": {"listen": "127.0.0.1:0", "auth_token": COMPANION_TOKEN, "projects_root": str(self.projects),
                          "routes": [{"directory_prefix": str(self.projects / kind), "backend": kind} for kind in KINDS]},
            "discoclaw": {"listen": "127.0.0.1:0", "setup_token": dc.SETUP_TOKEN},
            "backends": [
                {"name": "echo", "kind": "echo"},
                {**prefixing("command"), "command": ["/bin/sh", "-c", "printf 'cmd: '; cat"]},
                claude_backend(bundled_cli(), self.anthropic, root / "claude-home", name="claude-code"),
                {"name": "openclaw", "kind": "openclaw", "url": f"ws://127.0.0.1:{port['gateway']}"},
                {"name": "clawline", "kind": "clawline", "url": f"ws://127.0.0.1:{port['clawline']}/ws"},
                {"name": "companion", "kind": "companion", "url": f"ws://127.0.0.1:{port['companion']}/ws",
                 "token": COMPANION_TOKEN, "working_directory": str(projects_u)},
                {"name": "discoclaw", "kind": "discoclaw", "url": f"http://127.0.0.1:{port['discoclaw']}",
                 "setup_token": dc.SETUP_TOKEN},
            ],
        }).start()
        # U approves D's gateway account; D's Clawline account is U's first device (approved at once).
        deadline = time.monotonic() + 20
        while not (pending := [d for d in self.upstream.devices() if d["status"] == "pending" and d["protocol"] == "gateway"]):
            assert time.monotonic() < deadline, "D's openclaw account never asked U to pair"
            time.sleep(0.1)
        self.upstream.cli("devices", "approve", pending[0]["deviceId"])
        for name in ("openclaw", "clawline", "companion", "discoclaw"):
            wait_account(self.relay, "connected", timeout=30, name=name)
        self.clawline_device = None
        self.clawline_cursor = None
        self.gateway_identity = Identity()
        self.discoclaw = dc.register(self.relay)

    def stop(self) -> None:
        for relay in (self.relay, self.upstream):
            if relay.running:
                assert relay.terminate() == 0, relay.stderr_text()[-2000:]
        self.anthropic.close()


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    world = Matrix(tmp_path_factory.mktemp("matrix"))
    yield world
    world.stop()


async def through_clawline(world: Matrix, kind: str, text: str) -> str:
    if world.clawline_device is None:
        world.clawline_device = await pair_first_admin(world.relay)
    # Resume after the last answer seen, so no earlier answer is replayed into this turn.
    client, _ = await auth(world.relay, world.clawline_device, last_message_id=world.clawline_cursor)
    await client.send_json(message_frame(f"/backend {kind}"))
    await client.recv_until(lambda f: is_assistant_final()(f) and f["content"].startswith(f"This conversation is now answered by {kind} "), 20)
    await client.send_json(message_frame(text))
    final, _ = await client.recv_until(lambda f: is_assistant_final()(f) and text in f.get("content", ""), 30)
    world.clawline_cursor = final["id"]
    return final["content"]


async def through_gateway(world: Matrix, kind: str, text: str) -> str:
    operator, _ = await paired(world.relay, world.gateway_identity)
    key = f"backend:{kind}:matrix"
    started = await operator.request("chat.send", {"sessionKey": key, "message": text, "idempotencyKey": str(uuid.uuid4())})
    assert started["ok"], started
    final = await operator.event("chat", timeout=30, where=lambda p: p.get("state") == "final" and p.get("sessionKey") == key)
    await operator.close()
    return final["payload"]["message"]["content"][0]["text"]


async def through_companion(world: Matrix, kind: str, text: str) -> str:
    client = await CompanionClient.connect(world.relay, device_id=f"matrix-{kind}")
    turn = await claude_command(client, text, None, str(world.projects / kind), timeout=30)
    assert turn.reply["type"] == "claudeResponse" and turn.reply["data"]["success"] is True, turn.reply
    return turn.reply["data"]["content"]


async def through_discoclaw(world: Matrix, kind: str, text: str) -> str:
    device = world.discoclaw
    conversation = await asyncio.to_thread(device.create_conversation, f"matrix {kind}", backend=kind)
    sock = await dc.Socket.connect(world.relay, device.token)
    done = await dc.turn(device, sock, conversation["id"], text, dc.new_client_id(), timeout=30)
    deltas = "".join(d["delta"] for d in done.deltas)
    assert deltas in ("", done.complete["content"]), f"deltas concatenate to the answer: {deltas!r}"
    return done.complete["content"]


CLIENT = {"clawline": through_clawline, "gateway": through_gateway, "companion": through_companion, "discoclaw": through_discoclaw}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("client", CLIENTS)
async def test_one_turn_from_every_client_protocol_to_every_backend_kind(matrix, client, kind):
    text = f"matrix {client} to {kind} {uuid.uuid4().hex[:6]}"
    answer = await CLIENT[client](matrix, kind, text)
    assert answer == ANSWER[kind].format(text), f"{client} → {kind}: {answer!r}"
