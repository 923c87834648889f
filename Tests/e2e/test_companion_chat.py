"""Claude Companion downstream: the real app's chat path and the order of one turn on the wire, over the real binary.

The rest of the chat logic (paragraphs, adoption, failures, other sockets and devices) is tested in memory by
Tests/CompanionBridgeTests/CompanionChatTests.swift.
"""

import pytest

from companion_client import (
    ISO_MS_Z_RE,
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every frame must decode in the app)
    chunks_of,
    claude_command,
    projects,
    real,
    result_of,
    start_companion,
    start_project,
)


@pytest.fixture
def crelay(relay_factory, tmp_path):
    return start_companion(relay_factory, tmp_path, names=("app", "lib", "tool"))


def check_start(body: dict, name: str, path: str) -> dict:
    assert body["success"] is True and isinstance(body["message"], str), body
    session = body["session"]
    for key in ("sessionId", "projectName", "projectPath", "status", "startedAt"):
        assert isinstance(session.get(key), str) and session[key], f"the app needs session.{key} as a string: {body}"
    assert session["projectName"] == name and real(session["projectPath"]) == real(path), body
    assert session["status"] == "running", body
    return session


def check_turn(turn, session_id: str, answer: str) -> list[dict]:
    """The order docs/companion.md gives for one turn, as the asking socket sees it; returns its chunks."""
    reply = turn.reply
    assert reply["type"] == "claudeResponse", f"the first frame with the command's requestId must be claudeResponse: {reply}"
    assert reply["data"]["content"] == answer and reply["data"]["success"] is True, reply
    assert reply["data"]["sessionId"] == session_id and reply["data"].get("error") is None, reply
    for frame in turn.before + turn.extra:
        assert frame["requestId"] is None, f"broadcasts carry requestId null: {frame}"
    assert not any(f["type"] == "streamChunk" for f in turn.extra), f"every chunk comes before the claudeResponse: {turn.extra}"
    chunks = chunks_of(turn.before, session_id)
    text = [c for c in chunks if c["type"] == "text"]
    assert text, f"the answer streams as text chunks: {turn.before}"
    assert all(c["content"].strip() and c["isFinal"] is False for c in text), text
    assert "\n\n".join(c["content"] for c in text) == answer, f"text chunks are the answer's paragraphs: {text}"
    last = chunks[-1]
    assert last["type"] == "complete" and last["content"] == "" and last["isFinal"] is True, chunks
    assert [c for c in chunks if c["type"] == "complete"] == [last], chunks
    assert [c["id"] for c in chunks] == [f"chunk-{i}" for i in range(len(chunks))], f"ids chunk-N from 0: {chunks}"
    for frame in turn.before:
        if frame["type"] == "streamChunk":
            assert frame["data"]["isFinal"] is frame["data"]["chunk"]["isFinal"], frame
    frames = turn.frames
    complete_at = next(i for i, f in enumerate(frames) if f["type"] == "streamChunk" and f["data"]["chunk"]["type"] == "complete")
    messages = [i for i, f in enumerate(frames) if f["type"] == "assistantMessage"]
    results = [i for i, f in enumerate(frames) if result_of(session_id)(f)]
    assert len(messages) == 1 and len(results) == 1, f"one assistantMessage and one conversationResult: {frames}"
    assert complete_at < messages[0] and complete_at < results[0], f"they follow the complete chunk: {frames}"
    message = frames[messages[0]]["data"]
    assert message["type"] == "assistant_response" and message["content"] == [{"type": "text", "text": answer}], message
    result = frames[results[0]]["data"]
    assert result["type"] == "final_result" and result["success"] is True and result["result"] == answer, result
    assert isinstance(result["duration"], (int, float)), result
    return chunks


async def test_the_real_apps_chat_path(crelay):
    listing = projects(crelay)
    session = check_start(start_project(crelay, "app"), "app", listing["app"]["path"])  # no body: a fresh session
    sid = session["sessionId"]
    client = await CompanionClient.connect(crelay)  # the app: ?token=, no device id
    subscribed, queued = await client.subscribe(sid)
    assert queued == [] and subscribed["data"]["sessionIds"] == [sid], (queued, subscribed)
    turn = await claude_command(client, "hello relay", sid, listing["app"]["path"])
    check_turn(turn, sid, "echo: hello relay")
    assert ISO_MS_Z_RE.match(turn.reply["timestamp"]), turn.reply
    again = await claude_command(client, "and again", sid, listing["app"]["path"])
    chunks = check_turn(again, sid, "echo: and again")
    assert chunks[0]["id"] == "chunk-0", "chunk numbering restarts every turn"


async def test_the_command_backend_gets_the_working_directory(relay_factory, tmp_path):
    script = 'cat >/dev/null; printf "cwd=%s wd=%s" "$(pwd)" "$CLAWRELAY_WORKING_DIRECTORY"'
    relay = start_companion(relay_factory, tmp_path, backend="cmd", cmd={"command": ["/bin/sh", "-c", script]})
    path = projects(relay)["lib"]["path"]
    sid = start_project(relay, "lib")["session"]["sessionId"]
    client = await CompanionClient.connect(relay)
    turn = await claude_command(client, "where am i", sid, path)
    assert turn.reply["type"] == "claudeResponse" and turn.reply["data"]["success"] is True, turn.reply
    content = turn.reply["data"]["content"].strip()
    cwd, wd = content.removeprefix("cwd=").split(" wd=")
    assert real(cwd) == real(path) and real(wd) == real(path), content
