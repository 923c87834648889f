"""Relay D's `discoclaw` backend is a DiscoClaw native client of relay U's `[discoclaw]` listener.

U answers with a slow echo; D serves a Clawline client whose turns go to U. A small TCP gate in
front of U can cut and refuse D's WebSocket (while REST still passes), so an answer that U
finishes while D's socket is down must come back through `/sync`.
"""
import asyncio
import json
import os
import re
import stat
import time

from conftest import accounts, auth, is_assistant_final, make_config, message_frame, send_and_complete, setup_admin, wait_account, wait_for
from discoclaw_client import SETUP_TOKEN, discoclaw_config, dport, http, write_config

WRONG_TOKEN = "f" * 64




def start_u(relay_factory, delay_ms: int = 0):
    """U: a relay whose [discoclaw] listener answers with echo; kept on its port across restarts."""
    relay = relay_factory(discoclaw_config(echo={"delay_ms": delay_ms}))
    cfg = relay.config
    cfg["discoclaw"]["listen"] = f"127.0.0.1:{dport(relay)}"
    write_config(relay, cfg)
    return relay


def start_d(relay_factory, port: int, **credential):
    cfg = make_config(clawline={"backend": "up"})
    cfg["server"] = {"log_level": "debug"}
    backend = {"name": "up", "kind": "discoclaw", "url": f"http://127.0.0.1:{port}", "conversation_title_prefix": "relay: "}
    backend |= credential or {"setup_token": SETUP_TOKEN}
    cfg["backends"].append(backend)
    return relay_factory(cfg)


def state_file(relay):
    return relay.data_dir / "accounts" / "up.discoclaw.json"


def stored(relay) -> dict:
    return json.loads(state_file(relay).read_text())


def upstream(u, token: str, path: str):
    resp = http(u, "GET", path, token=token)
    assert resp.status == 200, (path, resp.status, resp.body[:300])
    return resp.json()


def assistant_rows(u, token: str, conversation: str) -> list[dict]:
    rows = upstream(u, token, f"/conversations/{conversation}/messages?limit=200")["messages"]
    return [m for m in rows if m["role"] == "assistant"]


def assert_no_secret(relay, *secrets: str) -> None:
    audit = relay.cli("audit", "--json").stdout
    listed = relay.cli("accounts", "--json").stdout
    for secret in secrets:
        assert secret not in relay.stderr_text(), "a token leaked into the log"
        assert secret not in audit, "a token leaked into the audit"
        assert secret not in listed, "a token leaked into the account detail"


class Gate:
    """A TCP proxy in front of U: HTTP always passes; WebSocket upgrades pass unless blocked."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.blocked = False
        self.sockets: list[asyncio.StreamWriter] = []

    async def start(self) -> "Gate":
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def handle(self, reader, writer) -> None:
        try:
            first = await reader.readline()
        except (ConnectionError, asyncio.IncompleteReadError):
            first = b""
        websocket = first.startswith(b"GET /ws")
        if not first or (websocket and self.blocked):
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        up_writer.write(first)
        if websocket:
            self.sockets += [writer, up_writer]

        async def pipe(source, sink):
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def block(self) -> None:
        self.blocked = True
        for sock in self.sockets:
            sock.close()
        self.sockets.clear()

    async def stop(self) -> None:
        self.server.close()
        await self.server.wait_closed()


async def test_turns_stream_continue_one_conversation_and_a_restart_does_not_register_again(relay_factory):
    u = start_u(relay_factory, delay_ms=30)
    d = start_d(relay_factory, dport(u))
    connected = await asyncio.to_thread(wait_account, d, "connected")
    assert connected["kind"] == "discoclaw" and f"127.0.0.1:{dport(u)}" in connected["detail"], connected
    metrics = d.http("GET", "/metrics", admin=True).body.decode()
    assert 'clawrelay_upstream_link{account="up",state="connected"} 1' in metrics, metrics

    admin, client = await setup_admin(d)
    first = await send_and_complete(client, "hello over two relays")
    streamed = [f["content"] for f in first.frames if f.get("type") == "message" and f.get("role") == "assistant" and f.get("streaming")]
    assert streamed and all("echo: hello over two relays".startswith(text) for text in streamed), first.frames
    await send_and_complete(client, "and a second turn")

    # The registration is kept: 0600 in a 0700 directory, and the token is the one U knows.
    assert stat.S_IMODE(os.stat(state_file(d)).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(state_file(d).parent).st_mode) == 0o700
    kept = stored(d)
    token = kept["token"]
    assert kept["server"] == f"http://127.0.0.1:{dport(u)}" and kept["deviceId"] and kept["userId"], kept
    conversations = upstream(u, token, "/conversations")
    assert len(conversations) == 1, conversations
    assert conversations[0]["title"] == "relay: hello over two relays", conversations
    assert list(kept["conversations"].values()) == [conversations[0]["id"]], kept
    answers = assistant_rows(u, token, conversations[0]["id"])
    assert [m["content"] for m in answers] == ["echo: hello over two relays", "echo: and a second turn"], answers

    # A restart of D reuses the device and the conversation.
    d.restart()
    await asyncio.to_thread(wait_account, d, "connected")
    assert len(upstream(u, token, "/auth/devices")["devices"]) == 1
    assert stored(d)["token"] == token
    client, _ = await auth(d, admin)
    await send_and_complete(client, "after the restart of d")
    assert len(upstream(u, token, "/conversations")) == 1
    assert [m["content"] for m in assistant_rows(u, token, conversations[0]["id"])][-1] == "echo: after the restart of d"

    # The upstream conversation deleted there: the next turn starts a new one and remembers it.
    assert http(u, "DELETE", f"/conversations/{conversations[0]['id']}", token=token).status == 204
    await send_and_complete(client, "after a delete upstream")
    again = upstream(u, token, "/conversations")
    assert len(again) == 1 and again[0]["id"] != conversations[0]["id"], again
    wait_for(lambda: list(stored(d)["conversations"].values()) == [again[0]["id"]], what="the new mapping saved")

    # The token and the setup token stay out of the log, the audit and the account list; the
    # upstream REST calls are audited with the authorization redacted.
    await asyncio.to_thread(assert_no_secret, d, token, SETUP_TOKEN)
    rows = await asyncio.to_thread(d.audit, "--protocol", "client")
    posts = [r for r in rows if r["direction"] == "out" and r["kind"] == "http" and "/messages" in json.dumps(r["body"])]
    assert posts and all(re.search(r"authorization: sha256:[0-9a-f]{8}", json.dumps(r["body"])) for r in posts), posts
    registered = [r for r in rows if r["direction"] == "in" and r["opcode"] == "201" and "deviceId" in json.dumps(r["body"])]
    assert registered and "sha256:" in json.dumps(registered[0]["body"]), rows


async def test_an_answer_finished_while_the_socket_was_down_comes_back_through_sync(relay_factory):
    u = start_u(relay_factory, delay_ms=150)
    gate = await Gate(dport(u)).start()
    try:
        d = start_d(relay_factory, gate.port)
        await asyncio.to_thread(wait_account, d, "connected")
        _, client = await setup_admin(d)
        await send_and_complete(client, "first")
        token = stored(d)["token"]
        conversation = list(stored(d)["conversations"].values())[0]

        text = "one two three four five six seven eight"
        await client.send_json(message_frame(text))
        await client.recv_until(lambda f: f.get("type") == "message" and f.get("role") == "assistant" and f.get("streaming"), timeout=10)
        gate.block()
        await asyncio.to_thread(wait_account, d, {"retrying", "connecting"})

        def finished_on_u():
            deadline = time.monotonic() + 20
            while assistant_rows(u, token, conversation)[-1]["status"] != "complete":
                assert time.monotonic() < deadline, "U never finished the answer"
                time.sleep(0.1)

        await asyncio.to_thread(finished_on_u)
        gate.blocked = False
        final, _ = await client.recv_until(is_assistant_final(f"echo: {text}"), timeout=30)
        assert final["content"] == f"echo: {text}"
        await asyncio.to_thread(wait_account, d, "connected")
        await send_and_complete(client, "the link is back")
    finally:
        await gate.stop()


async def test_d_heals_when_u_restarts_and_a_cut_turn_fails(relay_factory):
    u = start_u(relay_factory, delay_ms=200)
    d = start_d(relay_factory, dport(u))
    await asyncio.to_thread(wait_account, d, "connected")
    _, client = await setup_admin(d)
    await send_and_complete(client, "before")

    # U dies mid-turn (no goodbye on the socket). Restarted, U marks the turn failed; D learns it
    # from the catch-up /sync, so the turn ends with an error, not silence.
    await client.send_json(message_frame("cut short by a restart of u"))
    await client.recv_until(lambda f: f.get("type") == "message" and f.get("role") == "assistant" and f.get("streaming"), timeout=10)
    await asyncio.to_thread(u.kill)
    await asyncio.to_thread(wait_account, d, {"retrying", "connecting"})
    await asyncio.to_thread(u.start)
    error, _ = await client.recv_until(lambda f: f.get("type") == "error", timeout=40)
    assert error["code"] == "server_error", error
    await asyncio.to_thread(wait_account, d, "connected", 40)
    await send_and_complete(client, "after u came back", timeout=20)
    token = stored(d)["token"]
    assert len(upstream(u, token, "/conversations")) == 1, "the conversation continues after U's restart"


async def test_a_refused_token_is_bad_credentials_without_a_hot_loop_and_never_leaks(relay_factory):
    u = start_u(relay_factory)
    d = start_d(relay_factory, dport(u), token=WRONG_TOKEN)
    refused = await asyncio.to_thread(wait_account, d, "bad_credentials")
    assert "the token was refused" in refused["detail"], refused
    retry = float(re.search(r"next try in (\d+\.\d) s", refused["detail"]).group(1))
    assert retry >= 24.0, f"a refused token is retried at the longest backoff only: {refused}"
    _, client = await setup_admin(d)
    await client.send_json(message_frame("not through"))
    error, _ = await client.recv_until(lambda f: f.get("type") == "error", timeout=10)
    assert error["code"] == "server_error", error
    assert not state_file(d).exists() or "token" not in stored(d)
    await asyncio.to_thread(assert_no_secret, d, WRONG_TOKEN)


async def test_a_wrong_setup_token_registers_nothing(relay_factory):
    u = start_u(relay_factory)
    d = start_d(relay_factory, dport(u), setup_token="not-the-setup-token")
    refused = await asyncio.to_thread(wait_account, d, "bad_credentials")
    assert "refused the setup token (401: Invalid setup token)" in refused["detail"], refused
    assert not state_file(d).exists()
    await asyncio.to_thread(assert_no_secret, d, "not-the-setup-token")
