"""The gateway's additions for a terminal chat client: every conversation of the mapped user in
`sessions.list` (any protocol's, `cv:` keys), read cursors (`sessions.markRead`, the
`sessions.changed` event, unread counts) and `backends.list`. `sessions.changed` is OpenClaw's
`{sessionKey, reason, ts, session}` (`openclaw_decode.changed` checks it decodes as OpenClawKit's
`OpenClawChatSessionsChangedEvent`); the relay's counts are fields of its `session` row."""
import asyncio
import json
import socket

import discoclaw_client as dc
from conftest import auth, relay_of_one_user, send_and_complete
from discoclaw_client import app_decodes_everything  # noqa: F401  (autouse: DiscoClaw events must decode)
from gateway_client import Identity, paired
from openclaw_decode import changed


def dead_port() -> int:
    """A loopback port where nothing listens (bound, read back, closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def shared_user_relay(relay_factory, upstream_port: int | None = None):
    """Clawline, DiscoClaw and the gateway serving one user: the first Clawline admin's."""
    cfg = dc.discoclaw_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    if upstream_port is not None:
        cfg["backends"].append({"name": "up", "kind": "openclaw", "url": f"ws://127.0.0.1:{upstream_port}"})
    return await relay_of_one_user(relay_factory, cfg, ("gateway", "discoclaw"))


def entry(listing: dict, **match) -> dict:
    found = [s for s in listing["payload"]["sessions"] if all(s.get(k) == v for k, v in match.items())]
    assert len(found) == 1, (match, listing)
    return found[0]


async def test_sessions_list_shows_every_protocols_conversations_and_cv_keys_reach_them(relay_factory):
    relay, admin = await shared_user_relay(relay_factory)
    operator, hello = await paired(relay, Identity())
    clawline, _ = await auth(relay, admin)
    await send_and_complete(clawline, "hello from clawline")
    # The Clawline app showed its answer as it arrived: read on every device.
    await operator.event("sessions.changed", where=changed("main", unreadCount=0, lastMessagePreview="echo: hello from clawline"))
    await clawline.close()  # a Clawline app on screen would read the DiscoClaw answer below as it arrived
    phone = await asyncio.to_thread(dc.register, relay)
    assert phone.user_id == admin.user_id
    sock = await dc.Socket.connect(relay, phone.token)
    disco = await asyncio.to_thread(phone.create_conversation, "Disco chat")
    done = await dc.turn(phone, sock, disco["id"], "line one\n\n  line two")

    features = hello["payload"]["features"]
    assert {"sessions.list", "sessions.markRead", "backends.list"} <= set(features["methods"]), features
    assert "sessions.changed" in features["events"], features
    listing = await operator.request("sessions.list")
    assert listing["ok"] and listing["payload"]["truncated"] is False, listing
    keys = [s["key"] for s in listing["payload"]["sessions"]]
    main = entry(listing, key="main")
    assert main["displayName"] == "Clawline" and main["lastMessagePreview"] == "echo: hello from clawline", main
    assert main["backend"] == "echo" and main["backendKind"] == "echo" and main["unreadCount"] == 0, main
    assert main["lastSeq"] == main["lastReadSeq"], main
    chat = entry(listing, displayName="Disco chat")
    assert chat["key"] == "cv:" + chat["sessionId"] and keys.index(chat["key"]) < keys.index("main"), "newest first"
    assert chat["lastMessagePreview"] == "echo: line one line two" and chat["lastMessageRole"] == "assistant", chat
    # A DiscoClaw socket is not a screen: the user's own message is read, the answer after it is not.
    assert chat["unreadCount"] == 1 and chat["lastSeq"] > done.complete["seq"] > chat["lastReadSeq"] > 0, (chat, done.complete)
    assert len(chat["lastMessagePreview"]) <= 120 and isinstance(chat["updatedAt"], int)

    sent = await operator.request("chat.send", {"sessionKey": chat["key"], "message": "via the gateway", "idempotencyKey": "cv-1"})
    assert sent["ok"] and sent["payload"]["status"] == "started", sent
    final = await operator.event("chat", where=lambda p: p.get("state") == "final" and p.get("runId") == sent["payload"]["runId"])
    assert final["payload"]["sessionKey"] == chat["key"], final
    await sock.recv_until(lambda f: f.get("type") == "message.complete" and f.get("conversationId") == disco["id"]
                          and f.get("content") == "echo: via the gateway")
    history = await operator.request("chat.history", {"sessionKey": chat["key"]})
    texts = [m["content"][0]["text"] for m in history["payload"]["messages"]]
    assert texts == ["line one\n\n  line two", "echo: line one\n\n  line two", "via the gateway", "echo: via the gateway"], texts
    assert history["payload"]["sessionId"] == chat["sessionId"] and history["payload"]["messages"][-1]["seq"] > 0, history
    aborted = await operator.request("chat.abort", {"sessionKey": chat["key"]})
    assert aborted["ok"] and aborted["payload"]["aborted"] is False, aborted

    others = json.loads((await asyncio.to_thread(relay.cli, "conversations", "list", "--json")).stdout)
    foreign = next(c for c in others if c["user"] != admin.user_id)  # Clawline's admin channel: another audience's
    for key in ("cv:" + foreign["id"], "cv:cv_no_such_conversation"):
        for method, params in (("chat.history", {"sessionKey": key}), ("chat.send", {"sessionKey": key, "message": "x"}),
                               ("sessions.markRead", {"key": key, "seq": 1})):
            refused = await operator.request(method, params)
            assert refused["ok"] is False and refused["error"]["code"] == "INVALID_REQUEST", (method, key, refused)
            assert refused["error"]["message"] == "unknown session", refused
    after = await operator.request("chat.history", {"sessionKey": chat["key"]})
    assert len(after["payload"]["messages"]) == 4, "nothing was sent through a refused key"


async def answered(operator, text: str) -> None:
    """Sends `text` to the main conversation from `operator` and waits for its echo."""
    sent = await operator.request("chat.send", {"sessionKey": "main", "message": text, "idempotencyKey": f"k-{text}"})
    assert sent["ok"], sent
    await operator.event("chat", where=lambda p: p.get("state") == "final" and p.get("runId") == sent["payload"]["runId"])


async def test_mark_read_and_reads_elsewhere_reach_every_operator_and_survive_a_restart(relay_factory):
    relay, _ = await shared_user_relay(relay_factory)  # no Clawline app online: nobody reads on their own
    reader, _ = await paired(relay, Identity())
    watcher, _ = await paired(relay, Identity())

    await answered(watcher, "first")
    unread = await watcher.event("sessions.changed", where=changed("main", unreadCount=1, lastMessagePreview="echo: first"))
    assert unread["payload"]["reason"] == "send", unread
    assert unread["payload"]["session"]["displayName"] == "main" and unread["payload"]["session"]["lastReadSeq"] > 0, unread
    await reader.event("sessions.changed", where=changed("main", unreadCount=1))
    newest = unread["payload"]["session"]["lastSeq"]

    marked = await reader.request("sessions.markRead", {"key": "main", "seq": newest})
    assert marked["ok"] and marked["payload"] == {"key": "main", "lastReadSeq": newest, "unreadCount": 0}, marked
    seen = await watcher.event("sessions.changed", where=changed("main", "read", unreadCount=0, lastReadSeq=newest))
    assert seen["payload"]["session"]["lastMessagePreview"] == "echo: first", seen
    back = await reader.request("sessions.markRead", {"key": "main", "seq": 1})
    assert back["payload"]["lastReadSeq"] == newest, "a cursor never moves back"
    past = await reader.request("sessions.markRead", {"key": "main", "seq": newest + 1000})
    assert past["payload"]["lastReadSeq"] == newest, "a seq past the newest message is clamped"

    await answered(watcher, "second")
    again = await watcher.event("sessions.changed", where=changed("main", unreadCount=1, lastMessagePreview="echo: second"))
    # Reading on another device (the reader's chat.history) clears it for everyone.
    history = await reader.request("chat.history", {"sessionKey": "main"})
    assert history["payload"]["messages"][-1]["seq"] == again["payload"]["session"]["lastSeq"], history
    await watcher.event("sessions.changed", where=changed("main", unreadCount=0, lastReadSeq=again["payload"]["session"]["lastSeq"]))

    await asyncio.to_thread(relay.restart)
    operator, _ = await paired(relay, Identity())
    main = entry(await operator.request("sessions.list"), key="main")
    assert main["lastReadSeq"] == again["payload"]["session"]["lastSeq"] and main["unreadCount"] == 0, main


async def test_a_new_conversation_elsewhere_is_announced(relay_factory):
    relay, _ = await shared_user_relay(relay_factory)
    operator, _ = await paired(relay, Identity())
    phone = await asyncio.to_thread(dc.register, relay)
    created = await asyncio.to_thread(phone.create_conversation, "Fresh")
    news = await operator.event("sessions.changed", where=changed("cv:" + created["id"], "create", displayName="Fresh"))
    row = news["payload"]["session"]
    assert row["unreadCount"] == 0 and row["unread"] is False, news
    assert row["lastMessagePreview"] is None and row["lastSeq"] == 0, news
    sock = await dc.Socket.connect(relay, phone.token)
    await dc.turn(phone, sock, created["id"], "ping")
    answered = await operator.event("sessions.changed", where=changed(row["key"], "send", unreadCount=1, unread=True))
    assert answered["payload"]["session"]["lastMessagePreview"] == "echo: ping", answered


async def test_backends_list_and_bad_params(relay_factory):
    relay, _ = await shared_user_relay(relay_factory, upstream_port=dead_port())
    operator, _ = await paired(relay, Identity())
    backends = await operator.request("backends.list")
    assert backends["ok"] and backends["payload"]["default"] == "echo", backends
    by_name = {b["name"]: b for b in backends["payload"]["backends"]}
    assert set(by_name) == {"echo", "cmd", "up"}, backends
    assert (by_name["echo"]["kind"], by_name["echo"]["state"]) == ("echo", "ready"), by_name
    assert (by_name["cmd"]["kind"], by_name["cmd"]["state"]) == ("command", "ready"), by_name
    assert by_name["up"]["kind"] == "openclaw" and by_name["up"]["state"] in ("connecting", "retrying"), by_name

    await operator.request("chat.history", {"sessionKey": "main"})
    for params in ({}, {"key": "main"}, {"key": "main", "seq": "5"}, {"key": "main", "seq": -1}, {"key": "", "seq": 1},
                   {"key": 7, "seq": 1}, {"key": "never-used", "seq": 1}):
        bad = await operator.request("sessions.markRead", params)
        assert bad["ok"] is False and bad["error"]["code"] == "INVALID_REQUEST", (params, bad)
    listing = await operator.request("sessions.list")
    assert all(s["key"] != "never-used" for s in listing["payload"]["sessions"]), "marking an unknown session read creates nothing"

    pairing_only, _ = await paired(relay, Identity(), scopes=("operator.pairing",))
    for method, params in (("sessions.list", {}), ("sessions.markRead", {"key": "main", "seq": 1}), ("backends.list", {})):
        refused = await pairing_only.request(method, params)
        assert refused["error"]["code"] == "FORBIDDEN" and refused["error"]["details"]["missingScope"] == "operator.read", refused


async def test_sessions_patch_renames_a_conversation_for_every_protocol(relay_factory):
    relay, _ = await shared_user_relay(relay_factory)
    operator, _ = await paired(relay, Identity())
    watcher, _ = await paired(relay, Identity())
    phone = await asyncio.to_thread(dc.register, relay)
    conversation = await asyncio.to_thread(phone.create_conversation, "before")
    key = "cv:" + conversation["id"]
    since = phone.cursor
    app = await dc.Socket.connect(relay, phone.token)

    renamed = await operator.request("sessions.patch", {"key": key, "label": "Trip plans ✈️"})
    assert renamed["ok"] and renamed["payload"]["ok"] is True and renamed["payload"]["key"] == key, renamed
    assert renamed["payload"]["entry"]["displayName"] == "Trip plans ✈️", renamed
    await watcher.event("sessions.changed", where=changed(key, "patch", displayName="Trip plans ✈️", label="Trip plans ✈️"))
    await app.recv_until(lambda f: f.get("type") == "conversation.updated" and f.get("conversationId") == conversation["id"])
    synced = await asyncio.to_thread(phone.sync, since)
    assert [c["title"] for c in synced["conversations"] if c["id"] == conversation["id"]] == ["Trip plans ✈️"], synced

    cleared = await operator.request("sessions.patch", {"key": key, "label": None})
    assert cleared["payload"]["entry"]["displayName"].startswith("conversation "), "no title: the short id shows"

    for params, message in (
        ({"key": key, "label": "x" * 513}, "label is longer than 512 bytes"),
        ({"key": key, "label": 7}, "label must be a string or null"),
        ({"key": key, "traceLevel": "on"}, "unsupported property 'traceLevel'"),
        ({"label": "x"}, "key required"),
        ({"key": "cv:cv_no_such_conversation", "label": "x"}, "unknown session"),
    ):
        refused = await operator.request("sessions.patch", params)
        assert refused["ok"] is False and refused["error"]["code"] == "INVALID_REQUEST", (params, refused)
        assert refused["error"]["message"] == message, (params, refused)
    reader, _ = await paired(relay, Identity(), scopes=("operator.read",))
    refused = await reader.request("sessions.patch", {"key": key, "label": "x"})
    assert refused["ok"] is False and refused["error"]["message"] == "missing scope: operator.write", refused


async def test_a_backend_key_for_a_backend_the_relay_lacks_is_refused_and_makes_nothing(relay_factory):
    relay, _ = await shared_user_relay(relay_factory)
    operator, _ = await paired(relay, Identity())
    key = "backend:nosuch:notes"
    for method, params in (("chat.send", {"sessionKey": key, "message": "hello", "idempotencyKey": "r1"}),
                           ("sessions.patch", {"key": key, "label": "Notes"}),
                           ("chat.history", {"sessionKey": key})):
        refused = await operator.request(method, params)
        assert refused["ok"] is False and refused["error"]["code"] == "INVALID_REQUEST", (method, refused)
        assert refused["error"]["message"] == "no backend named nosuch; configured: cmd, echo", (method, refused)
        assert refused["error"]["details"]["code"] == "UNKNOWN_BACKEND", (method, refused)
    listing = await operator.request("sessions.list")
    assert listing["payload"]["sessions"] == [], "no conversation was made"
    listed = await asyncio.to_thread(relay.cli, "conversations", "list", "--json")
    assert not any(c["backend"] == "nosuch" or "session:" + key in c["keys"] for c in json.loads(listed.stdout)), listed.stdout
