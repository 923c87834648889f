"""OpenClaw operators against the real relay: `agent` events (lifecycle and assistant text for every reader,
tool frames only for sockets that asked with caps ["tool-events"], each socket counting a run's frames
1, 2, 3 … without a gap, the lifecycle end before the chat final) and the approval methods' answers
when nothing waits, and Claude Code's permission prompts (the real CLI against the fake Messages API) as
`exec.approval.requested`, answered with `exec.approval.resolve`."""
import pytest

import fake_anthropic as fa
from claude_cli import anthropic, claude_backend, claude_cli  # noqa: F401  (fixtures)
from conftest import make_config
from gateway_client import OPENCLAW_CLI, Identity, paired

READ_WRITE = ("operator.read", "operator.write")


@pytest.fixture
def work(tmp_path):
    (tmp_path / "work").mkdir()
    return tmp_path / "work"


@pytest.fixture
def gateway_relay(relay_factory, tmp_path, work, claude_cli, anthropic):
    cfg = make_config(echo={"delay_ms": 20})
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home", allowed_tools=["Bash(echo *)", "Read"],
                                          working_directory=str(work)))
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    return relay_factory(cfg)


async def run_frames(client, run_id: str) -> tuple[list[dict], list[str]]:
    """Reads until the run's chat final; returns its agent payloads and the order of agent/chat frames."""
    await client.event("chat", timeout=20, where=lambda p: p.get("runId") == run_id and p.get("state") == "final")
    ordered = [f for f in client.seen if f.get("type") == "event" and f.get("event") in ("agent", "chat")
               and f.get("payload", {}).get("runId") == run_id]
    return ([f["payload"] for f in ordered if f["event"] == "agent"],
            [f"{f['event']}:{f['payload'].get('stream') or f['payload'].get('state')}" for f in ordered])


async def test_a_run_is_its_lifecycle_and_text_and_its_end_comes_before_the_chat_final(gateway_relay):
    writer, hello = await paired(gateway_relay, Identity(), **OPENCLAW_CLI)
    features = hello["payload"]["features"]
    assert "agent" in features["events"] and "exec.approval.requested" in features["events"], features
    reader, _ = await paired(gateway_relay, Identity(), scopes=("operator.read",), caps=["tool-events"])
    sent = await writer.request("chat.send", {"sessionKey": "main", "message": "one two three", "idempotencyKey": "run-e2e-1"})
    assert sent["ok"] and sent["payload"]["runId"] == "run-e2e-1", sent
    for client in (writer, reader):
        frames, order = await run_frames(client, "run-e2e-1")
        assert [f["seq"] for f in frames] == list(range(1, len(frames) + 1)), frames
        assert all(f["sessionKey"] == "main" and isinstance(f["ts"], int) for f in frames), frames
        assert frames[0]["stream"] == "lifecycle" and frames[0]["data"]["phase"] == "start", frames[0]
        assert frames[-1]["stream"] == "lifecycle" and frames[-1]["data"]["phase"] == "end", frames[-1]
        assert frames[-1]["data"]["endedAt"] >= frames[0]["data"]["startedAt"], frames
        texts = [f["data"] for f in frames if f["stream"] == "assistant"]
        assert texts and texts[-1]["text"] == "echo: one two three", texts
        assert "".join(t["delta"] for t in texts) == "echo: one two three", "the deltas add up to the answer"
        assert order.index("agent:lifecycle", 1) < order.index("chat:final"), order


async def test_tool_frames_go_only_to_sockets_that_asked_and_each_counts_without_a_gap(gateway_relay, anthropic, work):
    """Tool activity from Claude Code: a Bash command that works and a Read that fails."""
    anthropic.script(fa.tool_use("Bash", {"command": "echo from-bash", "description": "Say it"}, tool_id="toolu_01"),
                     fa.tool_use("Read", {"file_path": str(work / "missing.txt")}, tool_id="toolu_02"),
                     fa.text("both ran"))
    writer, _ = await paired(gateway_relay, Identity(), scopes=READ_WRITE)
    watcher, _ = await paired(gateway_relay, Identity(), scopes=READ_WRITE, caps=["tool-events"])
    sent = await writer.request("chat.send", {"sessionKey": "backend:claude:tools", "message": "hello tools", "idempotencyKey": "run-tools"})
    assert sent["ok"], sent
    plain, _ = await run_frames(writer, "run-tools")
    everything, _ = await run_frames(watcher, "run-tools")
    for frames in (plain, everything):
        assert [f["seq"] for f in frames] == list(range(1, len(frames) + 1)), frames
    assert not [f for f in plain if f["stream"] == "tool"], plain
    assert [(f["stream"], f["data"]) for f in everything if f["stream"] != "tool"] == [(f["stream"], f["data"]) for f in plain]
    tools = [f["data"] for f in everything if f["stream"] == "tool"]
    assert [(t["phase"], t["name"], t["toolCallId"]) for t in tools] == [
        ("start", "Bash", "toolu_01"), ("result", "Bash", "toolu_01"), ("start", "Read", "toolu_02"), ("result", "Read", "toolu_02")], tools
    assert tools[0]["args"] == {"command": "echo from-bash", "description": "Say it"}, tools[0]
    assert tools[1]["isError"] is False and tools[3]["isError"] is True, tools
    assert [t["text"] for t in (f["data"] for f in plain if f["stream"] == "assistant")][-1] == "both ran"


async def test_claude_codes_permission_prompt_is_an_exec_approval_an_operator_resolves(gateway_relay, anthropic, work):
    anthropic.script(fa.tool_use("Bash", {"command": "touch approved && echo done-it", "description": "Make a file"}))
    writer, _ = await paired(gateway_relay, Identity(), scopes=READ_WRITE)
    reviewer, _ = await paired(gateway_relay, Identity(), scopes=("operator.approvals",), **OPENCLAW_CLI)
    sent = await writer.request("chat.send", {"sessionKey": "backend:claude:ask", "message": "make it", "idempotencyKey": "run-ask"})
    assert sent["ok"], sent
    requested = (await reviewer.event("exec.approval.requested", timeout=30))["payload"]
    assert requested["request"]["command"] == "touch approved && echo done-it", requested
    assert requested["request"]["cwd"] == str(work), requested
    listed = await reviewer.request("exec.approval.list")
    assert [a["id"] for a in listed["payload"]] == [requested["id"]], listed
    resolved = await reviewer.request("exec.approval.resolve", {"id": requested["id"], "decision": "allow-once"})
    assert resolved["ok"], resolved
    event = (await reviewer.event("exec.approval.resolved", timeout=10))["payload"]
    assert event["id"] == requested["id"] and event["decision"] == "allow-once", event
    final = await writer.event("chat", timeout=30, where=lambda p: p.get("runId") == "run-ask" and p.get("state") == "final")
    assert final["payload"]["message"]["content"][0]["text"] == "tool said: done-it", final
    assert (work / "approved").exists()
    again = await reviewer.request("exec.approval.resolve", {"id": requested["id"], "decision": "deny"})
    assert not again["ok"] and again["error"]["code"] == "INVALID_REQUEST", again


async def test_the_approval_methods_answer_as_openclaw_when_nothing_waits(gateway_relay):
    reviewer, _ = await paired(gateway_relay, Identity(), scopes=("operator.approvals",), **OPENCLAW_CLI)
    for method in ("exec.approval.list", "plugin.approval.list"):
        listed = await reviewer.request(method)
        assert listed["ok"] and listed["payload"] == [], listed
    missing = "0123456789abcdef0123456789abcdef"
    for method, params in (("exec.approval.get", {"id": missing}), ("exec.approval.resolve", {"id": missing, "decision": "deny"}),
                           ("plugin.approval.resolve", {"id": missing, "decision": "allow-once"})):
        refused = await reviewer.request(method, params)
        error = refused["error"]
        assert not refused["ok"] and error["code"] == "INVALID_REQUEST", refused
        assert error["message"] == "unknown or expired approval id" and error["details"]["reason"] == "APPROVAL_NOT_FOUND", refused
    bad = await reviewer.request("exec.approval.resolve", {"id": missing, "decision": "maybe"})
    assert bad["error"]["message"] == "invalid decision", bad
    reader, _ = await paired(gateway_relay, Identity(), scopes=READ_WRITE)
    refused = await reader.request("exec.approval.list")
    assert refused["error"]["code"] == "FORBIDDEN" and refused["error"]["message"] == "missing scope: operator.approvals", refused
    assert refused["error"]["details"] == {"code": "MISSING_SCOPE", "missingScope": "operator.approvals",
                                           "requiredScopes": ["operator.approvals"]}, refused
