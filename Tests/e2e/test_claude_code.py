"""The claude-code backend in the real relay, with Tests/fixtures/claude-code/claude standing in for Claude Code.

Over Companion the fixture's tools show as toolUse/toolResult frames and tool_use chunks, and the answer
completes; over Clawline the answer arrives and the conversation's next turns resume the Claude session
the last one reported, also after a restart.
"""

from __future__ import annotations

import json
from pathlib import Path

from companion_client import (
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every frame must decode in the app)
    chunks_of,
    claude_command,
    companion_config,
    make_projects,
    projects,
    real,
    start_project,
)
from conftest import auth, is_assistant_final, make_config, message_frame, setup_admin

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "claude-code" / "claude"
FIRST = "Let me look around first."


def with_claude(cfg: dict, log: Path, mode: str = "ok") -> dict:
    cfg["backends"].append({"name": "claude", "kind": "claude-code", "command": [str(FIXTURE)], "timeout_seconds": 30,
                            "environment": {"CLAUDE_FIXTURE_LOG": str(log), "CLAUDE_FIXTURE_MODE": mode}})
    return cfg


def runs(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def companion_relay(relay_factory, tmp_path: Path, mode: str = "ok"):
    root = make_projects(tmp_path / "projects", ("app",))
    log = tmp_path / "claude-runs.jsonl"
    relay = relay_factory(with_claude(companion_config(projects_root=root, backend="claude"), log, mode))
    return relay, log


async def test_companion_shows_the_tools_and_the_answer_completes(relay_factory, tmp_path):
    relay, log = companion_relay(relay_factory, tmp_path)
    path = projects(relay)["app"]["path"]
    sid = start_project(relay, "app")["session"]["sessionId"]
    client = await CompanionClient.connect(relay)
    await client.subscribe(sid)
    turn = await claude_command(client, "hello relay", sid, path)
    answer = f"{FIRST}\n\nclaude: hello relay"
    assert turn.reply["type"] == "claudeResponse" and turn.reply["data"]["success"] is True, turn.reply
    assert turn.reply["data"]["content"] == answer, turn.reply

    frames = turn.before
    uses = [f["data"] for f in frames if f["type"] == "toolUse"]
    results = [f["data"] for f in frames if f["type"] == "toolResult"]
    assert [(u["toolName"], u["toolId"]) for u in uses] == [("Bash", "toolu_01"), ("Read", "toolu_02")], uses
    assert uses[0]["toolInput"] == {"command": "pwd", "description": "Print the working directory"}, uses[0]
    assert uses[1]["toolInput"] == {"file_path": str(Path(real(path)) / "missing.txt")}, uses[1]
    assert all(u["type"] == "tool_use" and u["sessionId"] == sid for u in uses), uses
    assert [(r["toolName"], r["toolId"], r["success"]) for r in results] == [("Bash", "toolu_01", True), ("Read", "toolu_02", False)], results
    order = [(f["type"], f["data"]["toolId"]) for f in frames if f["type"] in ("toolUse", "toolResult")]
    assert order == [("toolUse", "toolu_01"), ("toolResult", "toolu_01"), ("toolUse", "toolu_02"), ("toolResult", "toolu_02")], order

    chunks = chunks_of(frames, sid)
    assert [c["id"] for c in chunks] == [f"chunk-{i}" for i in range(len(chunks))], chunks
    kinds = [(c["type"], c["content"]) for c in chunks]
    tools = [c for c in chunks if c["type"] == "tool_use"]
    assert [c["metadata"]["toolName"] for c in tools] == ["Bash", "Read"], tools
    assert kinds[0] == ("text", FIRST) and kinds[1] == ("tool_use", "pwd"), f"the text before a tool comes first: {kinds}"
    assert [c for c in chunks if c["type"] == "text"][-1]["content"] == "claude: hello relay", kinds
    assert kinds[-1] == ("complete", ""), kinds

    ran = runs(log)
    assert len(ran) == 1 and real(ran[0]["cwd"]) == real(path), ran
    assert ran[0]["argv"][:4] == ["-p", "--output-format", "stream-json", "--verbose"] and ran[0]["argv"][-2:] == ["--", "hello relay"], ran


async def test_companion_hears_why_claude_code_failed(relay_factory, tmp_path):
    relay, _ = companion_relay(relay_factory, tmp_path, mode="exit")
    path = projects(relay)["app"]["path"]
    sid = start_project(relay, "app")["session"]["sessionId"]
    client = await CompanionClient.connect(relay)
    await client.subscribe(sid)
    turn = await claude_command(client, "break", sid, path)
    data = turn.reply["data"]
    assert turn.reply["type"] == "claudeResponse" and data["success"] is False, turn.reply
    assert "Claude Code exited with status 3" in data["error"] and "fatal: the fixture was told to fail" in data["error"], data


async def test_clawline_answers_and_the_next_turns_resume_the_session_across_a_restart(relay_factory, tmp_path):
    log = tmp_path / "claude-runs.jsonl"
    cfg = with_claude(make_config(clawline={"backend": "claude"}), log)
    relay = relay_factory(cfg)
    admin, client = await setup_admin(relay)

    async def ask(client, text: str, resumed: str | None) -> dict:
        await client.send_json(message_frame(text))
        answer = f"{FIRST}\n\nclaude: {text}" + (f" (resumed {resumed})" if resumed else "")
        final, _ = await client.recv_until(is_assistant_final(answer), timeout=15)
        return final

    await ask(client, "first", None)
    first = runs(log)[-1]
    assert first["resume"] is None, first
    await ask(client, "second", first["session"])
    second = runs(log)[-1]
    assert second["resume"] == first["session"], "the second turn resumes the first one's session"
    await client.close()

    relay.restart()
    client, _ = await auth(relay, admin, name="admin-again")
    await ask(client, "third", second["session"])
    assert runs(log)[-1]["resume"] == second["session"], "the newest session id is stored, and survives a restart"
    await client.close()
