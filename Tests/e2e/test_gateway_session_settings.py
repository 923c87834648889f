"""`sessions.patch` beyond the label, as OpenClaw's apps send it: a model the picker built from
`models.list` (`"<provider>/<id>"`, or the bare name) rebinds the session to that backend and
`resolved` maps back to the choice; thinking level, fast and verbose modes, pinned, archived,
unread and category are kept per conversation and shown in its row; the thinking level reaches
Claude Code as its `--effort`. Every answer is checked against OpenClawKit's decoders
(`openclaw_decode`: `OpenClawChatModelPatchResult`, `OpenClawChatSessionEntry`,
`OpenClawChatSessionsChangedEvent`)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from claude_cli import anthropic, claude_backend, claude_cli, processes_with  # noqa: F401  (fixtures)
from conftest import make_config
from gateway_client import Identity, paired
from openclaw_decode import changed, entry_problems, patch_result_problems


def gateway_with_claude(relay_factory, tmp_path, cli, api):
    cfg = make_config()
    cfg["backends"].append(claude_backend(cli, api, tmp_path / "home"))
    cfg["gateway"] = {"listen": "127.0.0.1:0", "backend": "echo"}
    return relay_factory(cfg)


async def patched(operator, params: dict) -> dict:
    res = await operator.request("sessions.patch", params)
    assert res["ok"], res
    assert not patch_result_problems(res["payload"]), (patch_result_problems(res["payload"]), res)
    return res["payload"]


def efforts_of(home: Path) -> list[str]:
    """The `--effort` of every live Claude Code process whose HOME is `home`."""
    found = []
    for pid in processes_with("--input-format"):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"HOME={home}".encode() in environ:
            found.append(argv[argv.index(b"--effort") + 1].decode() if b"--effort" in argv else "")
    return found


async def wait_efforts(home: Path, expected: list[str], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while (seen := await asyncio.to_thread(efforts_of, home)) != expected:
        assert time.monotonic() < deadline, f"Claude Code processes run with efforts {seen}, not {expected}"
        await asyncio.sleep(0.05)


async def test_the_model_picker_rebinds_the_session_and_thinking_reaches_claude_code(relay_factory, tmp_path, claude_cli, anthropic):
    relay = gateway_with_claude(relay_factory, tmp_path, claude_cli, anthropic)
    operator, _ = await paired(relay, Identity())
    watcher, _ = await paired(relay, Identity(), scopes=("operator.read",))
    models = (await operator.request("models.list"))["payload"]["models"]
    # OpenClawKit's picker: selectionID = "<provider>/<id>" unless the id already has the prefix.
    choice = next(f"{m['provider']}/{m['id']}" for m in models if m["id"] == "claude")
    assert choice == "claude-code/claude", models

    picked = await patched(operator, {"key": "work", "model": choice})
    assert picked["key"] == "work" and picked["resolved"]["modelProvider"] == "claude-code", picked
    assert f"{picked['resolved']['modelProvider']}/{picked['resolved']['model']}" == choice, "resolved maps back to the choice"
    assert picked["entry"]["backend"] == "claude" and picked["entry"]["model"] == "claude", picked
    await watcher.event("sessions.changed", where=changed("work", "patch", model="claude", modelProvider="claude-code"))

    thinking = await patched(operator, {"key": "work", "thinkingLevel": "high"})
    assert thinking["entry"]["thinkingLevel"] == "high" and thinking["resolved"]["thinkingLevel"] == "high", thinking
    sent = await operator.request("chat.send", {"sessionKey": "work", "message": "hi", "idempotencyKey": "run-1"})
    assert sent["ok"], sent
    final = await operator.event("chat", timeout=40, where=lambda p: p.get("state") == "final" and p.get("runId") == "run-1")
    assert final["payload"]["message"]["content"][0]["text"] == "claude: hi", final
    await wait_efforts(tmp_path / "home", ["high"])

    # Another level: the conversation's process stops and the next turn's resumes the session with it.
    await patched(operator, {"key": "work", "thinkingLevel": "max"})
    await operator.request("chat.send", {"sessionKey": "work", "message": "again", "idempotencyKey": "run-2"})
    again = await operator.event("chat", timeout=40, where=lambda p: p.get("state") == "final" and p.get("runId") == "run-2")
    assert again["payload"]["message"]["content"][0]["text"] == "claude: again", again
    assert "hi" in str(anthropic.turn_requests[-1]["messages"]), "the new process resumed the session"
    await wait_efforts(tmp_path / "home", ["max"])

    bare = await patched(operator, {"key": "work", "model": "echo"})
    assert (bare["resolved"]["modelProvider"], bare["resolved"]["model"]) == ("echo", "echo"), bare
    for model in ("gpt-5", "echo/claude", ""):
        refused = await operator.request("sessions.patch", {"key": "work", "model": model})
        assert refused["ok"] is False and refused["error"]["code"] == "INVALID_REQUEST", (model, refused)
    unknown = await operator.request("sessions.patch", {"key": "work", "model": "gpt-5"})
    assert unknown["error"]["details"]["code"] == "UNKNOWN_MODEL" and "claude-code/claude" in unknown["error"]["message"], unknown


async def test_settings_show_in_the_row_null_clears_them_and_unread_false_reads(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    operator, _ = await paired(relay, Identity())
    sent = await operator.request("chat.send", {"sessionKey": "main", "message": "hello", "idempotencyKey": "r1"})
    await operator.event("chat", where=lambda p: p.get("state") == "final" and p.get("runId") == sent["payload"]["runId"])
    listing = await operator.request("sessions.list")
    row = listing["payload"]["sessions"][0]
    assert row["unreadCount"] == 1 and row["unread"] is True and not entry_problems(row), row

    settings = {"thinkingLevel": "xhigh", "fastMode": "auto", "verboseLevel": "on", "pinned": True, "archived": True,
                "category": "Errands", "label": "Groceries"}
    done = await patched(operator, {"key": "main", **settings})
    listed = (await operator.request("sessions.list"))["payload"]["sessions"][0]
    for name, value in settings.items():
        assert done["entry"][name] == value and listed[name] == value, (name, done, listed)
    assert listed["pinnedAt"] and listed["archivedAt"] and not entry_problems(listed), listed

    read = await patched(operator, {"key": "main", "unread": False})
    assert read["entry"]["unreadCount"] == 0 and read["entry"]["unread"] is False, read
    marked = await patched(operator, {"key": "main", "unread": True})
    assert marked["entry"]["unread"] is True and marked["entry"]["unreadCount"] == 0, marked

    cleared = await patched(operator, {"key": "main", "thinkingLevel": None, "fastMode": None, "verboseLevel": None,
                                       "category": None, "label": None, "pinned": False, "archived": False, "unread": False})
    for name in ("thinkingLevel", "fastMode", "verboseLevel", "category", "label", "pinnedAt", "archivedAt"):
        assert cleared["entry"][name] is None, (name, cleared)
    assert cleared["entry"]["pinned"] is False and cleared["entry"]["archived"] is False and cleared["entry"]["unread"] is False

    await asyncio.to_thread(relay.restart)
    again, _ = await paired(relay, Identity())
    await patched(again, {"key": "main", "thinkingLevel": "think harder", "category": "Kept"})
    await asyncio.to_thread(relay.restart)
    third, _ = await paired(relay, Identity())
    kept = (await third.request("sessions.list"))["payload"]["sessions"][0]
    assert (kept["thinkingLevel"], kept["category"]) == ("medium", "Kept"), "settings survive a restart"

    for params, message in (({"key": "main", "thinkingLevel": "loud"}, "invalid thinkingLevel"),
                            ({"key": "main", "fastMode": "turbo"}, "fastMode must be"),
                            ({"key": "main", "pinned": "yes"}, "pinned must be a boolean"),
                            ({"key": "main", "sendPolicy": "deny"}, "unsupported property 'sendPolicy'")):
        refused = await third.request("sessions.patch", params)
        assert refused["ok"] is False and refused["error"]["code"] == "INVALID_REQUEST", (params, refused)
        assert refused["error"]["message"].startswith(message), (params, refused)
