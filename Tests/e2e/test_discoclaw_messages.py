"""DiscoClaw messages end to end: a turn over REST + WebSocket (the sender's socket holds the answer's events
until after the POST 201; Tests/e2e/test_discoclaw_fast_answers.py has the app's view of that),
the contract's 400, idempotency, paging and /sync of streaming and failed rows on the real store, another
device's message in the /sync it triggers, Clawline as the same user, restart. The protocol logic of queues,
reconnects mid-stream, inactivity and the receive-only socket is tested in memory
(Tests/DiscoClawBridgeTests/DiscoClawMessageTests.swift)."""
import asyncio

import pytest

from conftest import auth, is_assistant_final, is_user_echo, message_frame, pair_first_admin, send_and_complete
from discoclaw_client import (
    Socket,
    add_device,
    app_decodes_everything,  # noqa: F401  (autouse: every event must parse in the app)
    discoclaw_config,
    expect,
    http,
    new_client_id,
    of,
    register,
    turn,
    write_config,
)

CONTENT_REQUIRED = {"statusCode": 400, "error": "Bad Request", "message": "content is required"}
LONG = "one two three four five six seven eight nine ten"


@pytest.fixture
def drelay(relay_factory):
    return relay_factory(discoclaw_config())


@pytest.fixture
def slow(relay_factory):
    """Echo streams a word every 300 ms: LONG takes ~3 s, long enough to look at a turn mid-stream."""
    return relay_factory(discoclaw_config(echo={"delay_ms": 300}))


def messages(dev, conv_id: str, query: str = "") -> dict:
    return dev.call("GET", f"/conversations/{conv_id}/messages{query}", shape="messages")


async def test_a_turn_answers_the_post_then_streams_to_the_senders_socket(drelay):
    dev = register(drelay)
    sock = await Socket.connect(drelay, dev.token)
    conv = dev.create_conversation("chat")
    cid = new_client_id()
    done = await turn(dev, sock, conv["id"], "the quick brown fox", client_id=cid)
    sent = done.sent
    assert sent["clientId"] == cid and sent["status"] == "complete" and sent["id"] != sent["assistantMessageId"], sent
    answer = [(o, f) for o, f in sock.log if f.get("messageId") == sent["assistantMessageId"]]
    assert all(o > done.sent_order for o, _ in answer), \
        f"an event for assistantMessageId arrived before the POST 201 (the app drops it): {answer}"
    assert done.deltas, f"the answer streams as message.delta first: {done.frames}"
    assert "".join(d["delta"] for d in done.deltas) == done.complete["content"] == "echo: the quick brown fox", done.frames
    placeholder = sent["seq"] + 1
    assert all(d["conversationId"] == conv["id"] and d["seq"] == placeholder for d in done.deltas), done.frames
    assert done.complete["seq"] == placeholder, f"an answer that ended while held completes with its placeholder's seq: {done.frames}"
    assert not any(of("conversation.updated")(f) for f in done.frames), done.frames
    announced, _ = await sock.recv_until(of("conversation.updated"), timeout=5)
    assert announced == {"type": "conversation.updated", "conversationId": conv["id"]}, \
        "announced again, for an app that had no row yet: its /sync from the placeholder finds the answer"
    listed = messages(dev, conv["id"])
    assert listed["hasMore"] is False and [m["role"] for m in listed["messages"]] == ["user", "assistant"], listed
    user, answer_row = listed["messages"]
    assert user == {**user, "id": sent["id"], "clientId": cid, "content": "the quick brown fox", "status": "complete",
                    "seq": sent["seq"], "conversationId": conv["id"]}, user
    assert answer_row == {**answer_row, "id": sent["assistantMessageId"], "content": "echo: the quick brown fox",
                          "status": "complete"}, answer_row
    assert answer_row["seq"] > placeholder and isinstance(answer_row.get("completedAt"), int), answer_row
    assert [m["id"] for m in dev.sync(placeholder)["messages"]] == [sent["assistantMessageId"]]
    synced = dev.sync(0)
    assert [m["id"] for m in synced["messages"]] == [sent["id"], sent["assistantMessageId"]], synced
    assert synced["cursor"] == answer_row["seq"], synced


@pytest.mark.parametrize("content", ["", "   \n\t ", None])
def test_empty_content_is_400_content_is_required(drelay, content):
    dev = register(drelay)
    conv = dev.create_conversation()
    body = {"clientId": new_client_id()} | ({} if content is None else {"content": content})
    got = expect(http(drelay, "POST", f"/conversations/{conv['id']}/messages", body, token=dev.token), 400, "http_error", "x")
    assert got == CONTENT_REQUIRED, got
    assert messages(dev, conv["id"])["messages"] == []


async def test_a_retried_post_is_the_same_message_and_no_second_turn(drelay):
    dev = register(drelay)
    sock = await Socket.connect(drelay, dev.token)
    conv = dev.create_conversation()
    cid = new_client_id()
    done = await turn(dev, sock, conv["id"], "only once", client_id=cid)
    again = await dev.post_message(conv["id"], "only once", cid)
    assert (again["id"], again["assistantMessageId"], again["seq"]) == \
        (done.sent["id"], done.sent["assistantMessageId"], done.sent["seq"]), (done.sent, again)
    conflict = await dev.acall("POST", f"/conversations/{conv['id']}/messages", {"content": "other", "clientId": cid}, 409)
    assert conflict is None
    await sock.expect_silence(0.5)  # bounded absence check: the retry starts no second answer
    assert [m["content"] for m in messages(dev, conv["id"])["messages"]] == ["only once", "echo: only once"]
    plain = await dev.post_message(conv["id"], "no client id")
    assert plain["clientId"] is None and "clientId" in plain, plain
    row = next(m for m in messages(dev, conv["id"])["messages"] if m["id"] == plain["id"])
    assert row.get("clientId") is None, f"the stored row agrees with the POST (no clientId was sent): {row}"


async def test_load_earlier_pages_backwards_in_ascending_order(drelay):
    dev = register(drelay)
    sock = await Socket.connect(drelay, dev.token)
    conv = dev.create_conversation()
    for i in range(6):
        await turn(dev, sock, conv["id"], f"message {i}")
    everything = messages(dev, conv["id"], "?limit=200")
    seqs = [m["seq"] for m in everything["messages"]]
    assert len(seqs) == 12 and seqs == sorted(set(seqs)) and everything["hasMore"] is False, everything
    assert [m["seq"] for m in messages(dev, conv["id"], "?limit=0")["messages"]] == seqs[-1:], "limit clamps to 1"
    assert len(messages(dev, conv["id"], "?limit=1000")["messages"]) == 12, "limit clamps to 200"
    for query in ("?limit=abc", "?before=xyz", "?limit=1.5"):
        resp = http(drelay, "GET", f"/conversations/{conv['id']}/messages{query}", token=dev.token)
        got = expect(resp, 400, "http_error", query)
        assert got["error"] == "Bad Request" and got["statusCode"] == 400, got
    pages, before = [], None
    while True:  # the app's "load earlier": ?limit=N&before=<oldest local seq>
        page = messages(dev, conv["id"], "?limit=5" + (f"&before={before}" if before is not None else ""))
        got = [m["seq"] for m in page["messages"]]
        assert got == sorted(got) and all(before is None or s < before for s in got), page
        pages.insert(0, got)
        if not page["hasMore"]:
            break
        before = got[0]
    assert pages == [seqs[0:2], seqs[2:7], seqs[7:12]], f"the newest `limit` before `before`, ascending: {pages}"


async def test_a_streaming_answer_is_in_sync_and_completes_with_a_higher_seq(slow):
    dev = register(slow)
    sock = await Socket.connect(slow, dev.token)
    conv = dev.create_conversation()
    sent = await dev.post_message(conv["id"], LONG)
    aid = sent["assistantMessageId"]
    await sock.recv_until(of("message.delta", aid), 5)
    mid = await dev.async_sync(0)
    row = next((m for m in mid["messages"] if m["id"] == aid), None)
    assert row is not None and row["status"] in ("pending", "streaming") and row["role"] == "assistant", mid
    assert f"echo: {LONG}".startswith(row["content"]) and row.get("completedAt") is None, row
    listed = next(m for m in messages(dev, conv["id"])["messages"] if m["id"] == aid)
    assert listed["status"] in ("pending", "streaming"), listed
    complete, _ = await sock.recv_until(of("message.complete", aid), 10)
    after = await dev.async_sync()  # since the cursor taken mid-stream: the completion is recovered
    final = [m for m in after["messages"] if m["id"] == aid]
    assert len(final) == 1 and final[0]["status"] == "complete" and final[0]["content"] == f"echo: {LONG}", after
    assert final[0]["seq"] > row["seq"] and final[0]["seq"] == complete["seq"], (row, final, complete)


async def test_a_message_from_another_device_is_announced_then_streams(drelay):
    phone = register(drelay)
    mac = add_device(phone)
    conv = phone.create_conversation()  # before the sockets: its own conversation.updated is not under test
    phone.sync()
    phone_socket = await Socket.connect(drelay, phone.token, name="phone")
    mac_socket = await Socket.connect(drelay, mac.token, name="mac")
    done = await turn(mac, mac_socket, conv["id"], "sent from the mac")
    aid = done.sent["assistantMessageId"]
    updated, before = await phone_socket.recv_until(of("conversation.updated", conversation_id=conv["id"]), 5)
    assert not any(f.get("messageId") == aid for f in before), f"conversation.updated precedes the deltas: {before}"
    synced = await phone.async_sync()
    ids = {m["id"]: m for m in synced["messages"]}
    assert done.sent["id"] in ids and ids[done.sent["id"]]["content"] == "sent from the mac", synced
    assert aid in ids and ids[aid]["role"] == "assistant", "the /sync it triggers returns the answer's row too"
    complete, rest = await phone_socket.recv_until(of("message.complete", aid), 10)
    deltas = "".join(f["delta"] for f in rest if of("message.delta", aid)(f))
    assert complete["content"] == "echo: sent from the mac" and deltas == complete["content"], (rest, complete)
    assert not any(of("conversation.updated")(f) for f in done.frames), "not to the sending device"


async def test_a_failing_backend_gives_message_error_and_an_error_row(relay_factory):
    relay = relay_factory(discoclaw_config(backend="cmd"))
    dev = register(relay)
    sock = await Socket.connect(relay, dev.token)
    conv = dev.create_conversation()
    sent = await dev.post_message(conv["id"], "please fail")
    error, _ = await sock.recv_until(of("message.error", sent["assistantMessageId"]), 10)
    assert error["conversationId"] == conv["id"] and error["error"].strip(), error
    row = next(m for m in dev.sync(0)["messages"] if m["id"] == sent["assistantMessageId"])
    assert row["status"] == "error" and isinstance(row.get("error"), str) and row["error"], row
    user = next(m for m in dev.sync(0)["messages"] if m["id"] == sent["id"])
    assert user["status"] == "complete" and user["content"] == "please fail", user


async def shared_user(relay_factory):
    """Pair a Clawline admin, restart with `[discoclaw] user_id` = its user, start its timeline."""
    relay = relay_factory(discoclaw_config())
    admin = await pair_first_admin(relay)
    write_config(relay, discoclaw_config(user_id=admin.user_id))
    await asyncio.to_thread(relay.restart)
    claw, _ = await auth(relay, admin, name="clawline")
    await send_and_complete(claw, "start the timeline")
    dev = register(relay)
    assert dev.user_id == admin.user_id, dev
    timeline = [c["id"] for c in dev.sync(0)["conversations"]]
    assert len(timeline) == 1, f"the Clawline timeline is one DiscoClaw conversation: {timeline}"
    return relay, claw, dev, timeline[0]


async def test_a_clawline_message_reaches_discoclaw(relay_factory):
    relay, claw, dev, timeline = await shared_user(relay_factory)
    sock = await Socket.connect(relay, dev.token)
    await claw.send_json(message_frame("hello from clawline"))
    _, before = await sock.recv_until(of("conversation.updated", conversation_id=timeline), 10)
    assert not any(of("message.delta")(f) for f in before), f"conversation.updated precedes the deltas: {before}"
    synced = await dev.async_sync()  # right away, as the app does on conversation.updated
    users = [m for m in synced["messages"] if m["role"] == "user" and m["content"] == "hello from clawline"]
    answers = [m for m in synced["messages"] if m["role"] == "assistant"]
    assert len(users) == 1 and users[0]["conversationId"] == timeline and len(answers) == 1, synced
    complete, rest = await sock.recv_until(of("message.complete", answers[0]["id"]), 10)
    assert complete["content"] == "echo: hello from clawline" and complete["conversationId"] == timeline, complete
    assert "".join(f["delta"] for f in rest if of("message.delta", answers[0]["id"])(f)) == complete["content"], rest
    await claw.recv_until(is_assistant_final("echo: hello from clawline"), 10)


async def test_a_discoclaw_message_reaches_the_clawline_device(relay_factory):
    relay, claw, dev, timeline = await shared_user(relay_factory)
    sock = await Socket.connect(relay, dev.token)
    done = await turn(dev, sock, timeline, "hello from discoclaw")
    assert done.complete["content"] == "echo: hello from discoclaw", done.complete
    await claw.recv_until(is_user_echo("hello from discoclaw"), 10)
    final, _ = await claw.recv_until(is_assistant_final("echo: hello from discoclaw"), 10)
    assert final["streaming"] is False, final


async def test_tokens_and_history_survive_a_restart(drelay):
    dev = register(drelay)
    revoked = add_device(dev)
    dev.call("DELETE", f"/auth/devices/{revoked.device_id}", status=204)
    sock = await Socket.connect(drelay, dev.token)
    conv = dev.create_conversation("kept")
    for text in ("first", "second"):
        await turn(dev, sock, conv["id"], text)
    before = dev.sync(0)
    await sock.close()
    await asyncio.to_thread(drelay.restart)
    assert dev.call("GET", "/auth/me", shape="me")["device"]["id"] == dev.device_id
    assert dev.sync(0) == before, "the same history after a restart"
    assert http(drelay, "GET", "/auth/me", token=revoked.token).status == 401, "a revoked token stays revoked"
    sock = await Socket.connect(drelay, dev.token)
    done = await turn(dev, sock, conv["id"], "third")
    assert done.sent["seq"] > before["cursor"], (before["cursor"], done.sent)
