"""The session lifecycle as OpenClaw's apps drive it through the relay's gateway: `sessions.reset`
(and `/new`, `/reset`, `/clear` typed in `chat.send`), `sessions.create`, `sessions.delete` and
`sessions.compact`, the gateway's other slash commands (`/model`, `/think`, `/stop`) run by the
relay, and every change announced by `sessions.changed` with OpenClaw's reason. Answers are
checked against OpenClawKit's decoders (`openclaw_decode`) and OpenClaw's schemas
(`packages/gateway-protocol/src/schema/sessions.ts`). A reset gives the key a fresh session (new
`sessionId`, empty history) and archives the old one, as OpenClaw's `performGatewaySessionReset`
does; with Claude Code the next turn starts without `--resume` and the old process stops."""

from __future__ import annotations

import asyncio
import json
import time

from claude_cli import anthropic, claude_backend, claude_cli, processes_with  # noqa: F401  (fixtures)
from conftest import make_config
from gateway_client import Identity, paired
from openclaw_decode import changed, create_result_problems, entry_problems


def gateway_relay(relay_factory, backend: dict | None = None, default: str = "echo"):
    cfg = make_config()
    if backend:
        cfg["backends"].append(backend)
    cfg["gateway"] = {"listen": "127.0.0.1:0", "backend": default}
    return relay_factory(cfg)


async def say(operator, key: str, text: str, run: str, timeout: float = 10.0) -> dict:
    sent = await operator.request("chat.send", {"sessionKey": key, "message": text, "idempotencyKey": run})
    assert sent["ok"], sent
    final = await operator.event("chat", timeout=timeout, where=lambda p: p.get("runId") == run and p.get("state") == "final")
    return final["payload"]


async def history(operator, key: str) -> list[str]:
    res = await operator.request("chat.history", {"sessionKey": key})
    assert res["ok"], res
    return [m["content"][0]["text"] for m in res["payload"]["messages"]]


async def test_reset_gives_the_key_a_fresh_session_and_keeps_the_old_one_archived(relay_factory):
    relay = gateway_relay(relay_factory)
    operator, _ = await paired(relay, Identity())
    watcher, _ = await paired(relay, Identity(), scopes=("operator.read",))
    await say(operator, "work", "first", "r1")
    before = (await operator.request("sessions.list"))["payload"]["sessions"][0]

    reset = await operator.request("sessions.reset", {"key": "work", "reason": "new"})
    assert reset["ok"] and reset["payload"]["ok"] is True and reset["payload"]["key"] == "work", reset
    entry = reset["payload"]["entry"]
    assert not entry_problems(entry, "entry") and entry["sessionId"] != before["sessionId"] and entry["messageCount"] == 0, reset
    await watcher.event("sessions.changed", where=changed("work", "new", sessionId=entry["sessionId"]))
    assert await history(operator, "work") == [], "OpenClaw's reset: a new transcript"
    assert await history(operator, "cv:" + before["sessionId"]) == ["first", "echo: first"], "the old one is archived, not deleted"
    archived = next(s for s in (await operator.request("sessions.list"))["payload"]["sessions"] if s["sessionId"] == before["sessionId"])
    assert archived["archived"] is True and archived["key"] == "cv:" + before["sessionId"], archived

    again = await operator.request("sessions.reset", {"key": "work"})
    await watcher.event("sessions.changed", where=changed("work", "reset", sessionId=again["payload"]["entry"]["sessionId"]))
    for params in ({}, {"key": "work", "reason": "later"}, {"key": "work", "expectedSessionId": "x"}):
        refused = await operator.request("sessions.reset", params)
        assert refused["ok"] is False and refused["error"]["code"] == "INVALID_REQUEST", (params, refused)


async def test_the_gateways_slash_commands_are_run_by_the_relay(relay_factory):
    relay = gateway_relay(relay_factory)
    operator, _ = await paired(relay, Identity())
    await say(operator, "main", "hello", "r1")
    model = await say(operator, "main", "/model command/cmd", "r2")
    assert model["message"]["content"][0]["text"] == "This conversation is now answered by cmd (it was echo).", model
    think = await say(operator, "main", "/think ultrathink", "r3")
    assert think["message"]["content"][0]["text"] == "Thinking: high from the next message.", think
    row = (await operator.request("sessions.list"))["payload"]["sessions"][0]
    assert (row["model"], row["modelProvider"], row["thinkingLevel"]) == ("cmd", "command", "high"), row
    stop = await operator.request("chat.send", {"sessionKey": "main", "message": "/stop", "idempotencyKey": "r4"})
    assert stop["ok"] and stop["payload"]["status"] == "aborted" and stop["payload"]["runIds"] == [], stop

    cleared = await say(operator, "main", "/clear", "r5")
    assert cleared["message"]["content"][0]["text"].startswith("Started a new session."), cleared
    await operator.event("sessions.changed", where=changed("main", "reset"))
    assert await history(operator, "main") == [], "/clear is a reset"
    row = (await operator.request("sessions.list"))["payload"]["sessions"]
    fresh = next(s for s in row if s["key"] == "main")
    assert fresh["model"] == "cmd" and fresh["thinkingLevel"] == "high", "a reset keeps the session's settings"


async def test_create_delete_and_compact_on_echo(relay_factory):
    relay = gateway_relay(relay_factory)
    operator, _ = await paired(relay, Identity())
    watcher, _ = await paired(relay, Identity(), scopes=("operator.read",))
    made = await operator.request("sessions.create", {"key": "trip", "label": "Trip", "model": "echo/echo", "category": "Travel"})
    assert made["ok"] and made["payload"]["key"] == "trip" and made["payload"]["sessionId"], made
    assert not create_result_problems(made["payload"]), create_result_problems(made["payload"])
    # OpenClawKit's new child session sends its parent's key: taken, not kept.
    child = await operator.request("sessions.create", {"key": "trip-notes", "agentId": "main", "parentSessionKey": "trip", "label": "Notes"})
    assert child["ok"] and not create_result_problems(child["payload"]), child
    assert not entry_problems(made["payload"]["entry"], "entry") and made["payload"]["entry"]["category"] == "Travel", made
    await watcher.event("sessions.changed", where=changed("trip", "create"))
    bare = await operator.request("sessions.create", {})
    assert bare["ok"] and bare["payload"]["key"].startswith("chat-"), bare

    compact = await operator.request("sessions.compact", {"key": "trip"})
    assert compact["payload"] == {"ok": True, "key": "trip", "compacted": False, "reason": "its backend keeps no context to compact"}, compact
    await watcher.event("sessions.changed", where=lambda p: changed("trip", "compact")(p) and p["compacted"] is False)

    await say(operator, "trip", "pack", "r1")
    kept = await operator.request("sessions.delete", {"key": "trip", "deleteTranscript": False})
    assert kept["ok"] and kept["payload"]["deleted"] is True and kept["payload"]["archived"][0].startswith("cv:"), kept
    await watcher.event("sessions.changed", where=lambda p: p.get("sessionKey") == "trip" and p.get("reason") == "delete" and "session" not in p)
    assert await history(operator, kept["payload"]["archived"][0]) == ["pack", "echo: pack"]
    gone = await operator.request("sessions.delete", {"key": bare["payload"]["key"]})
    assert gone["payload"] == {"ok": True, "key": bare["payload"]["key"], "deleted": True, "archived": []}, gone
    await watcher.event("sessions.changed", where=lambda p: p.get("sessionKey") == bare["payload"]["key"] and p.get("reason") == "delete")
    keys = [s["key"] for s in (await operator.request("sessions.list"))["payload"]["sessions"]]
    assert "trip" not in keys and bare["payload"]["key"] not in keys, keys
    main = await operator.request("sessions.delete", {"key": "main"})
    assert main["ok"] is False and main["error"]["message"] == "Cannot delete the main session (main).", main
    reader, _ = await paired(relay, Identity(), scopes=("operator.read",))
    for method in ("sessions.reset", "sessions.create", "sessions.delete", "sessions.compact"):
        refused = await reader.request(method, {"key": "x"})
        assert refused["error"]["message"] == "missing scope: operator.write", (method, refused)


def claude_pids(home) -> list[int]:
    found = []
    for pid in processes_with("--input-format"):
        try:
            if f"HOME={home}".encode() in open(f"/proc/{pid}/environ", "rb").read().split(b"\0"):
                found.append(pid)
        except OSError:
            continue
    return found


async def test_claude_code_starts_afresh_after_a_reset_and_compacts(relay_factory, tmp_path, claude_cli, anthropic):
    home = tmp_path / "home"
    relay = gateway_relay(relay_factory, claude_backend(claude_cli, anthropic, home), default="claude")
    operator, _ = await paired(relay, Identity())
    first = await say(operator, "main", "remember the zorbleflux", "r1", timeout=40)
    assert first["message"]["content"][0]["text"] == "claude: remember the zorbleflux", first
    pids = await asyncio.to_thread(claude_pids, home)
    assert len(pids) == 1, pids

    compact = await operator.request("sessions.compact", {"key": "main"}, timeout=60)
    assert compact["ok"] and compact["payload"]["compacted"] is True, compact

    reset = await operator.request("sessions.reset", {"key": "main", "reason": "reset"})
    assert reset["ok"], reset
    deadline = time.monotonic() + 20
    while pids[0] in await asyncio.to_thread(claude_pids, home):
        assert time.monotonic() < deadline, "the reset conversation's Claude Code process still runs"
        await asyncio.sleep(0.05)
    second = await say(operator, "main", "what animal?", "r2", timeout=40)
    assert second["message"]["content"][0]["text"] == "claude: what animal?", second
    sent = json.dumps(anthropic.turn_requests[-1]["messages"])
    assert "zorbleflux" not in sent, "a fresh session: no --resume, nothing of the old one"
    new_pids = await asyncio.to_thread(claude_pids, home)
    assert "--resume" not in open(f"/proc/{new_pids[0]}/cmdline", "rb").read().decode(errors="replace"), new_pids
