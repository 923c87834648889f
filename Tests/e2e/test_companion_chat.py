"""Claude Companion downstream: the real app's chat path and the order of one turn on the wire."""
import uuid

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
    same_device,
    session_details,
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


async def test_each_paragraph_is_one_chunk(crelay):
    sid = start_project(crelay, "app")["session"]["sessionId"]
    client = await CompanionClient.connect(crelay)
    turn = await claude_command(client, "first paragraph\n\nsecond paragraph", sid, projects(crelay)["app"]["path"])
    chunks = check_turn(turn, sid, "echo: first paragraph\n\nsecond paragraph")
    assert [c["content"] for c in chunks if c["type"] == "text"] == ["echo: first paragraph", "second paragraph"], chunks


async def test_unknown_session_ids_are_adopted(crelay):
    listing = projects(crelay)
    adopted = str(uuid.uuid4())
    body = start_project(crelay, "app", {"continueSession": True, "sessionId": adopted})
    assert check_start(body, "app", listing["app"]["path"])["sessionId"] == adopted, body
    assert start_project(crelay, "app")["session"]["sessionId"] == adopted, "one session per directory"
    again = start_project(crelay, "app", {"continueSession": True, "sessionId": adopted})
    assert again["session"]["sessionId"] == adopted, again
    plain = str(uuid.uuid4())
    assert start_project(crelay, "lib", {"sessionId": plain})["session"]["sessionId"] == plain

    restored = str(uuid.uuid4())  # an id the app kept from an earlier server: claudeCommand adopts it too
    client = await CompanionClient.connect(crelay)
    turn = await claude_command(client, "adopt me", restored, listing["tool"]["path"])
    check_turn(turn, restored, "echo: adopt me")
    assert {adopted, plain, restored} <= set(session_details(crelay)), session_details(crelay)
    turn = await claude_command(client, "in the adopted one", adopted, listing["app"]["path"])
    check_turn(turn, adopted, "echo: in the adopted one")


async def test_a_failing_backend_answers_with_a_failed_claude_response(relay_factory, tmp_path):
    relay = start_companion(relay_factory, tmp_path, backend="cmd")  # cmd: `cat; exit 3`
    sid = start_project(relay, "app")["session"]["sessionId"]
    path = projects(relay)["app"]["path"]
    asker = await CompanionClient.connect(relay, device_id="asker")
    watcher = await CompanionClient.connect(relay, device_id="watcher")
    await asker.subscribe(sid)
    await watcher.subscribe(sid)
    turn = await claude_command(asker, "this will fail", sid, path)
    reply = turn.reply
    assert reply["type"] == "claudeResponse", f"never an error frame for a claudeCommand: {reply}"
    assert reply["data"]["success"] is False and reply["data"]["content"] == "", reply
    assert isinstance(reply["data"]["error"], str) and reply["data"]["error"].strip(), reply
    await asker.expect_silence(1.0, ignore=lambda f: f.get("requestId") != turn.request_id)
    assert [f for f in asker.frames if f.get("requestId") == turn.request_id] == [reply], "one frame carries the requestId"
    failed, before = await watcher.recv_until(lambda f: f["type"] == "conversationResult", 10)
    assert failed["data"]["success"] is False and failed["requestId"] is None, failed
    seen = before + [failed]
    if not any(f["type"] == "error" for f in seen):
        error, _ = await watcher.recv_until(lambda f: f["type"] == "error", 5)
        seen.append(error)
    error = next(f for f in seen if f["type"] == "error")
    assert error["data"]["code"] == "COMMAND_FAILED" and error["requestId"] is None, error


async def test_a_directory_outside_projects_root_fails_as_a_claude_response(crelay):
    client = await CompanionClient.connect(crelay)
    turn = await claude_command(client, "escape", str(uuid.uuid4()), "/etc")
    assert turn.reply["type"] == "claudeResponse", turn.reply
    assert turn.reply["data"]["success"] is False and turn.reply["data"]["error"], turn.reply


async def test_other_sockets_of_the_session_see_the_turn_and_the_user_message(crelay):
    sid = start_project(crelay, "app")["session"]["sessionId"]
    path = projects(crelay)["app"]["path"]
    asker = await CompanionClient.connect(crelay, device_id="dev-a")
    other = await CompanionClient.connect(crelay, device_id="dev-b")
    await asker.subscribe(sid)
    await other.subscribe(sid)
    turn = await claude_command(asker, "from a", sid, path)
    check_turn(turn, sid, "echo: from a")
    result, before = await other.recv_until(result_of(sid, "echo: from a"), 10)
    users = [f for f in before if f["type"] == "userMessage"]
    assert len(users) == 1, f"one userMessage for the other device: {before}"
    user = users[0]["data"]
    assert user["sessionId"] == sid and user["content"] == "from a" and same_device(user["deviceId"], "dev-a"), user
    assert isinstance(user["messageId"], str) and user["messageId"], user
    first_chunk = next(i for i, f in enumerate(before) if f["type"] == "streamChunk")
    assert before.index(users[0]) < first_chunk, f"the user message comes before the answer: {before}"
    text = [c["content"] for c in chunks_of(before, sid) if c["type"] == "text"]
    assert "\n\n".join(text) == "echo: from a", before
    await other.expect_silence(0.7)
    assert not any(f["type"] == "claudeResponse" or f.get("requestId") == turn.request_id for f in other.frames), \
        f"the reply goes only to the socket that asked: {other.frames}"


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


@pytest.mark.parametrize("how", ["claudeCommand", "ask"])
async def test_a_socket_holds_the_sessions_it_asked_in(crelay, how):
    sid = start_project(crelay, "app")["session"]["sessionId"]
    path = projects(crelay)["app"]["path"]
    mine = await CompanionClient.connect(crelay, device_id="holder")  # never subscribes
    if how == "claudeCommand":
        assert (await claude_command(mine, "mine", sid, path)).reply["data"]["success"] is True
    else:
        reply, _ = await mine.request("ask", {"prompt": "mine", "sessionId": sid}, 15)
        assert reply["type"] == "askResponse" and reply["data"]["success"] is True, reply
    other = await CompanionClient.connect(crelay, device_id="other")
    await claude_command(other, "yours", sid, path)
    result, before = await mine.recv_until(result_of(sid, "echo: yours"), 10)
    assert "_queued" not in result, result
    assert [f["data"]["content"] for f in before if f["type"] == "userMessage"] == ["yours"], before


async def test_every_socket_of_the_asking_device_gets_the_claude_response(crelay):
    # all installs of the real app are one device (no x-device-id, same user agent)
    sid = start_project(crelay, "app")["session"]["sessionId"]
    path = projects(crelay)["app"]["path"]
    install_a = await CompanionClient.connect(crelay, name="install-a")
    install_b = await CompanionClient.connect(crelay, name="install-b")
    await install_a.subscribe(sid)
    await install_b.subscribe(sid)
    turn = await claude_command(install_a, "to both", sid, path)
    check_turn(turn, sid, "echo: to both")
    reply, before = await install_b.recv_until(lambda f: f.get("requestId") == turn.request_id, 10)
    assert reply["type"] == "claudeResponse" and reply["data"]["content"] == "echo: to both", reply
    assert not any(f["type"] == "streamChunk" for f in install_b.frames[install_b.frames.index(reply):]), \
        "the claudeResponse comes after every chunk"
