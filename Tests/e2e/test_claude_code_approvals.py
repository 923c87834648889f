"""Claude Code's permission prompts as the relay's approvals, with the real CLI: Clawline shows a note
and takes `/approve ID`, `/always ID` and `/deny ID`; the first answer wins across devices; nobody
answering denies; an abort cancels what waits and stops what runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import discoclaw_client as dc

import fake_anthropic as fa
from claude_cli import (  # noqa: F401  (fixtures)
    NOTE_RE,
    anthropic,
    approval_note,
    ask,
    claude_backend,
    claude_cli,
    hold_command,
    is_note,
    processes_with,
    wait_gone,
    wait_running,
)
from companion_client import (
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every Companion frame must decode in the app)
    companion_config,
    make_projects,
    projects,
    rest,
    start_project,
)
from conftest import auth, is_assistant_final, make_config, message_frame, pair_and_approve, relay_of_one_user, setup_admin
from discoclaw_client import app_decodes_everything  # noqa: F401  (autouse: DiscoClaw events must decode)
from gateway_client import Identity, paired
from test_chat_tui import chat_screen


def approvals(relay, *args: str) -> list[dict]:
    return json.loads(relay.cli("approvals", "--json", *args).stdout)


def last_tool_result(api) -> str:
    return fa.result_text(fa.tool_results(api.turn_requests[-1])[0])


async def test_approve_always_and_deny_from_clawline(relay_factory, tmp_path, claude_cli, anthropic):
    work = tmp_path / "work"
    work.mkdir()
    cfg = make_config(clawline={"backend": "claude", "messages_per_second": 50})
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home", working_directory=str(work)))
    relay = relay_factory(cfg)
    _, client = await setup_admin(relay)

    anthropic.script(fa.tool_use("Bash", {"command": "touch once && echo made-once", "description": "Make a file"}))
    await client.send_json(message_frame("make a file"))
    tool, summary, short = await approval_note(client)
    assert (tool, summary) == ("Bash", "touch once && echo made-once") and len(short) >= 4
    assert [(a["tool"], a["shortId"]) for a in approvals(relay)] == [("Bash", short)], "pending"
    await client.send_json(message_frame(f"/approve {short}"))
    await client.recv_until(is_assistant_final("tool said: made-once"), 30)
    assert (work / "once").exists()

    # Always: the same call again in this conversation is not asked again.
    command = "touch always && echo made-always"
    anthropic.script(fa.tool_use("Bash", {"command": command, "description": "Make another"}))
    await client.send_json(message_frame("make another"))
    _, _, short = await approval_note(client)
    await client.send_json(message_frame(f"/always {short}"))
    await client.recv_until(is_assistant_final("tool said: made-always"), 30)
    anthropic.script(fa.tool_use("Bash", {"command": command, "description": "Make another"}))
    await client.send_json(message_frame("once more"))
    _, skipped = await client.recv_until(is_assistant_final("tool said: made-always"), 30)
    assert not any(is_note(f) for f in skipped), "asked again after always"

    # Deny: Claude hears who denied, and nothing ran.
    anthropic.script(fa.tool_use("Bash", {"command": "touch never", "description": "Do not"}))
    await client.send_json(message_frame("do something bad"))
    _, _, short = await approval_note(client)
    await client.send_json(message_frame(f"/deny {short}"))
    await client.recv_until(is_assistant_final("tool said: Denied by Admin from clawline"), 30)
    assert not (work / "never").exists()
    assert last_tool_result(anthropic) == "Denied by Admin from clawline"
    decided = sorted(approvals(relay, "--all"), key=lambda a: a["createdAt"])
    assert [(a["decision"], a["cause"], a["decidedFrom"]) for a in decided] == [
        ("allow-once", "decided", "clawline"), ("allow-always", "decided", "clawline"), ("deny", "decided", "clawline")], decided


async def test_nobody_answering_denies_and_claude_is_told(relay_factory, tmp_path, claude_cli, anthropic):
    cfg = make_config(clawline={"backend": "claude"})
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home", approval_timeout_seconds=2))
    relay = relay_factory(cfg)
    _, client = await setup_admin(relay)
    anthropic.script(fa.tool_use("Bash", {"command": f"touch {tmp_path}/late", "description": "Too late"}))
    await client.send_json(message_frame("go"))
    _, _, short = await approval_note(client)
    expected = "tool said: Nobody answered the permission request within 2 s; it was denied"
    _, skipped = await client.recv_until(is_assistant_final(expected), 30)
    assert any("nobody answered in time" in f.get("content", "") for f in skipped), skipped
    assert not (tmp_path / "late").exists()


async def test_the_first_answer_wins_across_two_devices(relay_factory, tmp_path, claude_cli, anthropic):
    cfg = make_config(clawline={"backend": "claude"})
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home"))
    relay = relay_factory(cfg)
    admin, phone = await setup_admin(relay)
    tablet_device = await pair_and_approve(relay, phone, user_id=admin.user_id, name="Tablet")
    tablet, _ = await auth(relay, tablet_device, name="tablet")
    anthropic.script(fa.tool_use("Bash", {"command": f"touch {tmp_path}/won && echo won", "description": "Race"}))
    await phone.send_json(message_frame("race"))
    _, _, short = await approval_note(phone)
    assert (await approval_note(tablet))[2] == short, "every device is asked"
    await tablet.send_json(message_frame(f"/approve {short}"))
    await tablet.recv_until(is_assistant_final("tool said: won"), 30)
    await phone.send_json(message_frame(f"/deny {short}"))
    late, _ = await phone.recv_until(lambda f: is_assistant_final()(f) and "already answered" in f["content"], 10)
    assert "allowed once by Tablet from clawline" in late["content"], late
    assert (tmp_path / "won").exists()


async def test_abort_cancels_a_waiting_approval_and_stops_a_running_command(relay_factory, tmp_path, claude_cli, anthropic):
    cfg = make_config(clawline={"backend": "claude"})
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home"))
    relay, admin = await relay_of_one_user(relay_factory, cfg)
    client, _ = await auth(relay, admin)
    operator, _ = await paired(relay, Identity())

    command, marker = hold_command(tmp_path)
    anthropic.script(fa.tool_use("Bash", {"command": command, "description": "Hold"}))
    await client.send_json(message_frame("hold on"))
    _, _, short = await approval_note(client)
    aborted = await operator.request("chat.abort", {"sessionKey": "main"})
    assert aborted["ok"] and aborted["payload"]["aborted"] is True, aborted
    await client.recv_until(lambda f: is_note(f) is False and "cancelled" in f.get("content", "") and short in f["content"], 20)
    assert approvals(relay) == [], "nothing waits any more"
    assert not processes_with(marker), "the command never started"

    # A command that runs when the turn is aborted is stopped, not left behind.
    command, marker = hold_command(tmp_path)
    anthropic.script(fa.tool_use("Bash", {"command": command, "description": "Hold"}))
    await client.send_json(message_frame("hold on again"))
    _, _, short = await approval_note(client)
    await client.send_json(message_frame(f"/approve {short}"))
    await asyncio.to_thread(wait_running, marker)
    aborted = await operator.request("chat.abort", {"sessionKey": "main"})
    assert aborted["ok"] and aborted["payload"]["aborted"] is True, aborted
    await asyncio.to_thread(wait_gone, marker)
    await ask(client, "still there?", "claude: still there?")


async def test_companion_shows_its_permission_alert_and_the_apps_answer_decides(relay_factory, tmp_path, claude_cli, anthropic):
    root = make_projects(tmp_path / "projects", ("app",))
    cfg = companion_config(projects_root=root, backend="claude")
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home"))
    relay = relay_factory(cfg)
    path = projects(relay)["app"]["path"]
    sid = start_project(relay, "app")["session"]["sessionId"]
    app = await CompanionClient.connect(relay)
    await app.subscribe(sid)

    anthropic.script(fa.tool_use("Bash", {"command": "touch from-companion && echo made", "description": "Make it"}))
    rid = await app.send("claudeCommand", {"command": "make it", "projectPath": path, "sessionId": sid})
    prompt, _ = await app.recv_until(lambda f: f["type"] == "permissionRequest", 30)
    data = prompt["data"]
    assert data["sessionId"] == sid and "touch from-companion && echo made" in data["prompt"], prompt
    assert data["options"] and data["defaultOption"] in data["options"] and data["timeout"] > 0, prompt
    await app.send("permission", {"sessionId": sid, "response": "Allow once", "remember": False})
    answered, _ = await app.recv_until(lambda f: f["type"] == "permission", 10)
    assert answered["data"]["success"] is True and answered["data"]["accepted"] is True, answered
    reply, _ = await app.recv_until(lambda f: f.get("requestId") == rid, 30)
    assert reply["type"] == "claudeResponse" and reply["data"]["content"] == "tool said: made", reply
    assert (Path(path) / "from-companion").exists()

    # The HTTP form answers the next one: denied, nothing runs, Claude hears it.
    anthropic.script(fa.tool_use("Bash", {"command": "touch never-here", "description": "Do not"}))
    rid = await app.send("claudeCommand", {"command": "try again", "projectPath": path, "sessionId": sid})
    await app.recv_until(lambda f: f["type"] == "permissionRequest", 30)
    denied = rest(relay, "POST", f"/api/permission/{sid}", body={"response": "Deny"})
    assert denied.status == 200, (denied.status, denied.body)
    reply, _ = await app.recv_until(lambda f: f.get("requestId") == rid, 30)
    assert reply["data"]["content"].startswith("tool said: Denied by "), reply
    assert not (Path(path) / "never-here").exists()


async def test_discoclaw_gets_the_note_through_sync_and_approve_runs_the_tool(relay_factory, tmp_path, claude_cli, anthropic):
    cfg = dc.discoclaw_config()
    cfg["discoclaw"]["backend"] = "claude"
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home", working_directory=str(tmp_path)))
    relay = relay_factory(cfg)
    phone = await asyncio.to_thread(dc.register, relay)
    sock = await dc.Socket.connect(relay, phone.token)
    conversation = await asyncio.to_thread(phone.create_conversation, "Claude chat")
    anthropic.script(fa.tool_use("Bash", {"command": "touch from-discoclaw && echo made", "description": "Make it"}))
    asking = await phone.post_message(conversation["id"], "make it")
    short = None
    while short is None:  # the note is announced by conversation.updated; the app reads it through /sync
        await sock.recv_until(dc.of("conversation.updated", conversation_id=conversation["id"]), 30)
        rows = (await phone.async_sync(0))["messages"]
        notes = [NOTE_RE.search(r["content"]) for r in rows if r["role"] == "assistant"]
        short = next((n.group(3) for n in notes if n), None)
    done = await dc.turn(phone, sock, conversation["id"], f"/approve {short}", timeout=30)
    assert done.complete["content"].startswith("Approved once"), done.complete
    # the reply to /approve is held for the app to insert its row; the running answer's end is not
    final = next((f for f in done.frames if dc.of("message.complete", asking["assistantMessageId"])(f)), None)
    final = final or (await sock.recv_until(dc.of("message.complete", asking["assistantMessageId"]), 30))[0]
    assert final["content"] == "tool said: made", final
    assert (tmp_path / "from-discoclaw").exists()


def test_clawrelay_chat_shows_the_prompt_and_alt_o_allows_it(relay_factory, tmp_path, claude_cli, anthropic):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "auto_approve_loopback": True}
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home", working_directory=str(tmp_path)))
    relay = relay_factory(cfg)
    tmux = chat_screen(relay, tmp_path)
    try:
        tmux.wait_for("[1:echo]")
        tmux.keys("/new claude work", "Enter")
        tmux.wait_for("work — claude")
        anthropic.script(fa.tool_use("Bash", {"command": "touch from-tui && echo made-in-tui", "description": "Make it"}))
        tmux.keys("make it", "Enter")
        screen = tmux.wait_for("approve?", timeout=30)
        assert "touch from-tui && echo made-in-tui" in screen and "Alt-O" in screen, screen
        tmux.keys("M-o")
        screen = tmux.wait_for("tool said: made-in-tui", timeout=30)
        assert "allowed once" in screen, screen
        assert (tmp_path / "from-tui").exists()
    finally:
        tmux.close()
