"""The claude-code backend with the real Claude Code CLI (claude-agent-sdk's bundled one) against the
scripted fake Messages API: one live process per conversation, answers that stream, tools, Claude
Code's own slash commands, what runs cost, resume after a relay restart, and API errors, through
Clawline, Companion and DiscoClaw."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid

import discoclaw_client as dc
import fake_anthropic as fa
from claude_cli import anthropic, ask, claude_backend, claude_cli, sessions_in  # noqa: F401  (fixtures)
from companion_client import (
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every frame must decode in the app)
    claude_command,
    companion_config,
    make_projects,
    projects,
    start_project,
)
from conftest import auth, is_assistant_final, make_config, message_frame, setup_admin
from discoclaw_client import app_decodes_everything  # noqa: F401  (autouse: DiscoClaw events must decode)


def clawline_claude(relay_factory, tmp_path, cli, api, **keys):
    cfg = make_config(clawline={"backend": "claude", "messages_per_second": 50})
    cfg["backends"].append(claude_backend(cli, api, tmp_path / "home", **keys))
    return relay_factory(cfg)


def conversation_usage(relay) -> tuple[dict, dict]:
    listing = json.loads(relay.cli("conversations", "list", "--json").stdout)
    main = next(c for c in listing if c["backend"] == "claude" or c["title"] in (None, "Clawline"))
    shown = json.loads(relay.cli("conversations", "show", main["id"], "--json").stdout)
    return main, shown


async def test_clawline_answers_stream_and_the_next_turns_resume_the_session_across_a_restart(relay_factory, tmp_path, claude_cli,
                                                                                              anthropic):
    relay = clawline_claude(relay_factory, tmp_path, claude_cli, anthropic)
    admin, client = await setup_admin(relay)

    # Bug 5: a long block streams as it is written (partial messages are on).
    anthropic.script(fa.text("a slow answer in six parts", pieces=6, delay=0.15))
    await client.send_json(message_frame("hello"))
    final, frames = await client.recv_until(is_assistant_final("a slow answer in six parts"), 40)
    streamed = [f["content"] for f in frames if f.get("type") == "message" and f.get("streaming") is True and f["id"] == final["id"]]
    assert len(streamed) >= 3, f"the answer streamed in steps: {streamed}"
    assert all(later.startswith(earlier) for earlier, later in zip(streamed, streamed[1:])), streamed

    await ask(client, "second", "claude: second")
    second = anthropic.turn_requests[-1]
    assert fa.user_text(second) == "second" and "hello" in json.dumps(second["messages"]), "one process: the session goes on"
    assert len(sessions_in(tmp_path / "home")) == 1

    await client.close()
    relay.restart()
    client, _ = await auth(relay, admin, name="admin-again")
    await ask(client, "third", "claude: third")
    third = json.dumps(anthropic.turn_requests[-1]["messages"])
    assert "hello" in third and "second" in third, "a new process resumed the stored session"
    assert len(sessions_in(tmp_path / "home")) == 1, "the same session, not a new one"

    _, shown = conversation_usage(relay)
    usage = shown.get("usage") or {}
    assert usage.get("runs") == 3 and usage.get("costUSD", 0) > 0, shown


async def test_claude_codes_slash_commands_pass_through_and_the_relays_come_first(relay_factory, tmp_path, claude_cli, anthropic):
    relay = clawline_claude(relay_factory, tmp_path, claude_cli, anthropic)
    _, client = await setup_admin(relay)
    await ask(client, "hi", "claude: hi")
    await client.send_json(message_frame("/cost"))
    final, _ = await client.recv_until(lambda f: is_assistant_final()(f) and "cost" in f["content"].lower(), 30)
    assert "Total" in final["content"] or "$" in final["content"], final
    before = len(anthropic.requests)
    await client.send_json(message_frame("/backend"))
    await client.recv_until(lambda f: is_assistant_final()(f) and "claude" in f["content"] and "backend" in f["content"], 10)
    assert len(anthropic.requests) == before, "the relay's own command never reaches Claude Code"


async def test_api_overload_retries_then_answers_and_an_api_error_fails_saying_so(relay_factory, tmp_path, claude_cli, anthropic):
    root = make_projects(tmp_path / "projects", ("app",))
    cfg = companion_config(projects_root=root, backend="claude")
    cfg["clawline"]["backend"] = "claude"
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home"))
    relay = relay_factory(cfg)
    path = projects(relay)["app"]["path"]
    sid = start_project(relay, "app")["session"]["sessionId"]
    companion = await CompanionClient.connect(relay)
    await companion.subscribe(sid)

    anthropic.script(fa.error(529), fa.error(529), fa.text("made it"))
    turn = await claude_command(companion, "retry please", sid, path, timeout=60)
    assert turn.reply["type"] == "claudeResponse" and turn.reply["data"]["success"] is True, turn.reply
    assert turn.reply["data"]["content"] == "made it", turn.reply
    assert len(anthropic.turn_requests) == 3
    statuses = [f["data"]["message"] for f in turn.before if f["type"] == "progress" and "retrying" in f["data"].get("message", "")]
    assert statuses == ["API overloaded, retrying 1/2", "API overloaded, retrying 2/2"], statuses

    # Bug 2: past the retries the turn fails with the API's status, never "reported success".
    anthropic.script(fa.error(529), fa.error(529), fa.error(529))
    turn = await claude_command(companion, "fail please", sid, path, timeout=60)
    data = turn.reply["data"]
    assert turn.reply["type"] == "claudeResponse" and data["success"] is False, turn.reply
    assert "Claude Code API error 529: Overloaded" in data["error"] and "success" not in data["error"], data

    # Through Clawline the error's text never streams as if it were the answer.
    admin, client = await setup_admin(relay)
    anthropic.script(fa.error(500), fa.error(500), fa.error(500))
    await client.send_json(message_frame("fail again"))
    failed, frames = await client.recv_until(lambda f: f.get("type") == "error", 60)
    assert failed["code"] == "server_error", failed
    assert not any("API Error" in f.get("content", "") for f in frames), frames
    await ask(client, "and now?", "claude: and now?")


async def test_companion_shows_the_tools_and_the_answer_completes(relay_factory, tmp_path, claude_cli, anthropic):
    root = make_projects(tmp_path / "projects", ("app",))
    cfg = companion_config(projects_root=root, backend="claude")
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home", allowed_tools=["Bash(echo *)"]))
    relay = relay_factory(cfg)
    path = projects(relay)["app"]["path"]
    sid = start_project(relay, "app")["session"]["sessionId"]
    client = await CompanionClient.connect(relay)
    await client.subscribe(sid)
    anthropic.script(fa.tool_use("Bash", {"command": "echo from-the-tool", "description": "Say hi"}, preface="Running it."))
    turn = await claude_command(client, "run a tool", sid, path, timeout=60)
    assert turn.reply["type"] == "claudeResponse" and turn.reply["data"]["success"] is True, turn.reply
    assert turn.reply["data"]["content"] == "Running it.\n\ntool said: from-the-tool", turn.reply
    uses = [f["data"] for f in turn.before if f["type"] == "toolUse"]
    results = [f["data"] for f in turn.before if f["type"] == "toolResult"]
    assert [(u["toolName"], u["toolInput"]["command"]) for u in uses] == [("Bash", "echo from-the-tool")], uses
    assert [(r["toolName"], r["toolId"], r["success"]) for r in results] == [("Bash", uses[0]["toolId"], True)], results


async def test_discoclaw_answers_from_claude_code(relay_factory, tmp_path, claude_cli, anthropic):
    cfg = dc.discoclaw_config()
    cfg["discoclaw"]["backend"] = "claude"
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home"))
    relay = relay_factory(cfg)
    phone = await asyncio.to_thread(dc.register, relay)
    sock = await dc.Socket.connect(relay, phone.token)
    conversation = await asyncio.to_thread(phone.create_conversation, "Claude chat")
    anthropic.script(fa.text("an answer for DiscoClaw", pieces=4, delay=0.05))
    done = await dc.turn(phone, sock, conversation["id"], "hello", timeout=60)
    assert done.complete["content"] == "an answer for DiscoClaw", done.complete
    deltas = "".join(d["delta"] for d in done.deltas)
    assert deltas in ("", done.complete["content"]), f"deltas concatenate to the answer: {deltas!r}"


async def test_a_session_claude_code_no_longer_has_fails_once_saying_why_and_the_next_message_starts_afresh(relay_factory, tmp_path,
                                                                                                            claude_cli, anthropic):
    """Bug 1: `--resume` of a gone session is refused by Claude Code; that id must not be kept."""
    relay = clawline_claude(relay_factory, tmp_path, claude_cli, anthropic)
    admin, client = await setup_admin(relay)
    await ask(client, "remember me", "claude: remember me")
    [gone] = sessions_in(tmp_path / "home")
    await client.close()
    assert relay.terminate() == 0
    gone.unlink()
    relay.start()
    client, _ = await auth(relay, admin, name="admin-again")
    await client.send_json(message_frame("are you there?"))
    failed, _ = await client.recv_until(lambda f: f.get("type") == "error", 60)
    assert f"could not resume session {gone.stem}" in failed["message"], failed
    assert "No conversation found" in failed["message"] and "the next message starts a new session" in failed["message"], failed
    final = await ask(client, "start over", "claude: start over")
    assert "remember me" not in json.dumps(anthropic.turn_requests[-1]["messages"]), "a new session, not the gone one"
    [fresh] = sessions_in(tmp_path / "home")
    assert fresh.stem != gone.stem and final["content"] == "claude: start over"
    await ask(client, "and again", "claude: and again")
    assert "start over" in json.dumps(anthropic.turn_requests[-1]["messages"]), "the new session goes on"


async def test_a_background_agents_text_never_lands_in_the_answer(relay_factory, tmp_path, claude_cli, anthropic):
    """Bug 4: a subagent's lines carry parent_tool_use_id, and its completion brings Claude Code a
    turn of its own (another `result`); neither belongs to the user's turn."""
    relay = clawline_claude(relay_factory, tmp_path, claude_cli, anthropic)
    _, client = await setup_admin(relay)
    release = threading.Event()
    subtask = "SUBTASK-" + uuid.uuid4().hex[:8]
    anthropic.script(
        fa.tool_use("Agent", {"description": "Look around", "prompt": subtask, "subagent_type": "general-purpose",
                              "run_in_background": True}, accepts=lambda b: fa.is_turn(b) and subtask not in fa.user_text(b)),
        fa.text("the subagent's findings", gate=release, accepts=lambda b: subtask in fa.user_text(b)),
        fa.text("main answer", accepts=lambda b: fa.is_turn(b) and subtask not in fa.user_text(b)))
    await client.send_json(message_frame("delegate it"))
    final, frames = await client.recv_until(is_assistant_final(), 60)
    assert final["content"] == "main answer", final
    release.set()
    # The subagent answers, and Claude Code takes its notification as a turn of its own.
    await asyncio.to_thread(anthropic.wait_requests, 4, 60)
    await client.send_json(message_frame("next"))
    _, frames = await client.recv_until(is_assistant_final("claude: next"), 60)
    assert not any(is_assistant_final()(f) for f in frames), f"no other answer lands in this turn: {frames}"
    assert not any(word in f.get("content", "") for f in frames for word in ("findings", "SUBTASK", "task-notification")), frames
