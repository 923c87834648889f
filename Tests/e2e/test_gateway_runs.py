"""What OpenClaw's apps call around a run, against the real relay: `agent.wait` (the native outbox's
run confirmation), `commands.list` (the composer's slash-command palette, with Claude Code's own
commands), `chat.inject` (an operator's assistant note, seen by every protocol) and a woken node's
`node.pending.*`. Every answer is checked for the fields OpenClaw's decoders require: the TS schemas
of `packages/gateway-protocol/src/schema/` (`AgentWaitParams` and the `agent.wait` handler's answer,
`CommandEntrySchema`, `ChatInjectParams` and the `chat` final, `NodePendingDrainResultSchema`) and
OpenClawKit's `OpenClawChatRunObservation.fromWaitResponse` / `OpenClawChatCommandChoice`."""
import asyncio

import fake_anthropic as fa
from claude_cli import anthropic, claude_backend, claude_cli  # noqa: F401  (fixtures)
from conftest import auth, is_assistant_final, make_config, relay_of_one_user
from gateway_client import OPENCLAW_CLI, OPENCLAWKIT_IOS, Identity, paired

READ_WRITE = ("operator.read", "operator.write")


def gateway_config(**echo) -> dict:
    cfg = make_config(echo=echo or None)
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    return cfg


async def test_agent_wait_times_out_while_the_run_runs_and_says_ok_after(relay_factory):
    relay = relay_factory(gateway_config(delay_ms=400))
    writer, hello = await paired(relay, Identity(), **OPENCLAW_CLI)
    assert "agent.wait" in hello["payload"]["features"]["methods"]
    sent = await writer.request("chat.send", {"sessionKey": "main", "message": "one two three", "idempotencyKey": "wait-1"})
    assert sent["ok"], sent
    running = await writer.request("agent.wait", {"runId": "wait-1", "timeoutMs": 50})
    # OpenClaw's agent.wait answer: runId and status are what fromWaitResponse reads.
    assert running["ok"] and running["payload"] == {"runId": "wait-1", "status": "timeout"}, running
    ended = await writer.request("agent.wait", {"runId": "wait-1", "timeoutMs": 20_000}, timeout=25)
    assert ended["ok"], ended
    assert ended["payload"]["runId"] == "wait-1" and ended["payload"]["status"] == "ok", ended
    assert isinstance(ended["payload"]["endedAt"], int), ended
    again = await writer.request("agent.wait", {"runId": "wait-1", "timeoutMs": 0})
    assert again["payload"] == ended["payload"], "a run that ended is answered at once"
    for params in ({}, {"runId": ""}, {"runId": "x", "timeoutMs": -5}, {"runId": "x", "timeoutMs": "10"}):
        refused = await writer.request("agent.wait", params)
        assert not refused["ok"] and refused["error"]["code"] == "INVALID_REQUEST", (params, refused)


async def test_a_socket_that_closes_while_waiting_leaves_the_relay_serving(relay_factory):
    relay = relay_factory(gateway_config(delay_ms=300))
    writer, _ = await paired(relay, Identity(), **OPENCLAW_CLI)
    await writer.request("chat.send", {"sessionKey": "main", "message": "a b c d", "idempotencyKey": "wait-2"})
    for _ in range(5):
        await writer.send({"type": "req", "id": "w", "method": "agent.wait", "params": {"runId": "wait-2", "timeoutMs": 60_000}})
    await writer.close()
    other, _ = await paired(relay, Identity(), **OPENCLAW_CLI)
    ended = await other.request("agent.wait", {"runId": "wait-2", "timeoutMs": 20_000}, timeout=25)
    assert ended["payload"]["status"] == "ok", ended


async def test_commands_list_has_the_relays_commands_and_claude_codes_own(relay_factory, tmp_path, claude_cli, anthropic):
    cfg = gateway_config()
    (tmp_path / "work").mkdir()
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home", working_directory=str(tmp_path / "work")))
    relay = relay_factory(cfg)
    client, hello = await paired(relay, Identity(), **OPENCLAWKIT_IOS, scopes=READ_WRITE)
    assert "commands.list" in hello["payload"]["features"]["methods"]
    # What the native composer sends (ChatGatewayRequest.commandsList).
    listed = await client.request("commands.list", {"scope": "text", "includeArgs": True})
    assert listed["ok"], listed
    names = [c["name"] for c in listed["payload"]["commands"]]
    assert names == ["backend", "approve", "always", "deny", "new", "reset", "clear", "model", "think", "compact", "stop"], names
    for command in listed["payload"]["commands"]:
        # CommandEntrySchema: name, description, source, scope, acceptsArgs are required.
        assert {"name", "description", "source", "scope", "acceptsArgs"} <= set(command), command
        assert command["textAliases"] == ["/" + command["name"]] and command["scope"] == "text", command
        assert command["source"] in ("native", "skill", "plugin"), command
    assert listed["payload"]["commands"][0]["args"] == [
        {"name": "name", "description": "The backend to switch to", "type": "string", "required": False}]

    anthropic.script(fa.text("hello from claude"))
    key = "backend:claude:palette"
    sent = await client.request("chat.send", {"sessionKey": key, "message": "hi", "idempotencyKey": "cmd-1"})
    assert sent["ok"], sent
    await client.event("chat", timeout=60, where=lambda p: p.get("runId") == "cmd-1" and p.get("state") == "final")
    with_claude = await client.request("commands.list", {"sessionKey": key, "scope": "text"})
    claude_names = [c["name"] for c in with_claude["payload"]["commands"]]
    # The relay's first (it runs /compact itself, passing it on to Claude Code), then Claude Code's others.
    own = claude_names[len(names):]
    assert claude_names[:len(names)] == names and own and "compact" not in own, claude_names
    first = next(c for c in with_claude["payload"]["commands"] if c["name"] == own[0])
    assert first["source"] == "plugin" and first["textAliases"] == ["/" + own[0]] and "args" not in first, first
    assert len(claude_names) == len(set(claude_names)), "each command once"


async def test_an_injected_note_is_a_chat_final_and_history_on_every_protocol(relay_factory):
    relay, admin = await relay_of_one_user(relay_factory, gateway_config())
    operator, hello = await paired(relay, Identity(), **OPENCLAW_CLI)
    assert "chat.inject" in hello["payload"]["features"]["methods"]
    reader, _ = await paired(relay, Identity(), scopes=READ_WRITE)
    phone, _ = await auth(relay, admin)
    sent = await operator.request("chat.send", {"sessionKey": "main", "message": "hi", "idempotencyKey": "before-inject"})
    assert sent["ok"], sent
    await phone.recv_until(is_assistant_final("echo: hi"))
    injected = await operator.request("chat.inject", {"sessionKey": "main", "message": "deploy done", "label": "CI"})
    assert injected["ok"] and injected["payload"]["ok"] is True, injected
    message_id = injected["payload"]["messageId"]
    assert isinstance(message_id, str) and message_id, injected
    final = await reader.event("chat", where=lambda p: p.get("runId") == f"inject-{message_id}")
    payload = final["payload"]
    assert payload["state"] == "final" and payload["seq"] == 0 and payload["sessionKey"] == "main", payload
    assert payload["message"]["role"] == "assistant", payload
    assert payload["message"]["content"] == [{"type": "text", "text": "[CI]\n\ndeploy done"}], payload
    history = await reader.request("chat.history", {"sessionKey": "main"})
    assert history["payload"]["messages"][-1]["id"] == message_id, history
    # The Clawline app of the same user gets it as an assistant message.
    note, _ = await phone.recv_until(lambda f: f.get("type") == "message" and f.get("role") == "assistant"
                                     and f.get("content") == "[CI]\n\ndeploy done")
    assert note["id"] == message_id, note
    refused = await reader.request("chat.inject", {"sessionKey": "main", "message": "x"})
    assert refused["error"]["code"] == "FORBIDDEN" and refused["error"]["details"]["missingScope"] == "operator.admin", refused
    unknown = await operator.request("chat.inject", {"sessionKey": "no-such-session", "message": "x"})
    assert unknown["error"]["code"] == "INVALID_REQUEST", unknown


async def test_a_woken_node_drains_an_empty_queue(relay_factory):
    relay = relay_factory(gateway_config())
    identity = Identity()
    node, hello = await paired(relay, identity, role="node", scopes=(), mode="node", protocol=(3, 4),
                               client_id="openclaw-ios", sign="v2", binary=True, commands=("camera.snap",))
    methods = hello["payload"]["features"]["methods"]
    assert {"node.pending.pull", "node.pending.drain", "node.pending.ack"} <= set(methods), methods
    pulled = await node.request("node.pending.pull", {})
    assert pulled["ok"] and pulled["payload"] == {"nodeId": identity.device_id, "actions": []}, pulled
    drained = await node.request("node.pending.drain", {"maxItems": 10})
    # NodePendingDrainResultSchema: nodeId, revision, items, hasMore.
    assert drained["payload"] == {"nodeId": identity.device_id, "revision": 0, "items": [], "hasMore": False}, drained
    acked = await node.request("node.pending.ack", {"ids": ["job-1"]})
    assert acked["payload"] == {"nodeId": identity.device_id, "ackedIds": ["job-1"], "remainingCount": 0}, acked
    bad = await node.request("node.pending.drain", {"maxItems": 0})
    assert bad["error"]["code"] == "INVALID_REQUEST", bad
    operator, _ = await paired(relay, Identity(), **OPENCLAW_CLI)
    refused = await operator.request("node.pending.pull", {})
    assert refused["error"]["message"] == "only nodes have pending work", refused
    await asyncio.gather(node.close(), operator.close())
