"""Read state follows the user across protocols: an answer a DiscoClaw app fetched is read on the
gateway too (unreadCount 0, `sessions.changed`), and the reverse."""
import discoclaw_client as dc
from discoclaw_client import app_decodes_everything  # noqa: F401  (autouse)
from gateway_client import Identity, paired
from openclaw_decode import changed


def shared_relay(relay_factory):
    cfg = dc.discoclaw_config(user_id="alice")
    cfg["gateway"] = {"listen": "127.0.0.1:0", "user_id": "alice"}
    return relay_factory(cfg)


def row_of(payload: dict, key: str) -> dict | None:
    """The row of a `sessions.changed` payload about `key` (OpenClaw's shape: `{sessionKey, reason, session}`)."""
    return payload.get("session") if payload.get("sessionKey") == key else None


def entry(listing: dict, key: str) -> dict:
    return next(s for s in listing["payload"]["sessions"] if s["key"] == key)


async def answered_on_discoclaw(relay_factory):
    """A relay, a paired operator, and one DiscoClaw conversation of the same user with an answered
    turn: (relay, operator, device, done, the conversation's gateway key)."""
    relay = shared_relay(relay_factory)
    operator, _ = await paired(relay, Identity())
    device = dc.register(relay)
    conversation = device.create_conversation("shared")
    sock = await dc.Socket.connect(relay, device.token)
    done = await dc.turn(device, sock, conversation["id"], "hello", dc.new_client_id())
    return relay, operator, device, done, f"cv:{conversation['id']}"


async def test_fetching_on_discoclaw_clears_the_gateway_unread_count(relay_factory):
    _, operator, device, done, key = await answered_on_discoclaw(relay_factory)
    before = entry(await operator.request("sessions.list"), key)
    assert before["unreadCount"] == 1, f"the answer is unread; the user's own message is not: {before}"
    device.sync(0)  # the app fetches it
    changed = await operator.event(
        "sessions.changed", timeout=5,
        where=lambda p: row_of(p, key) is not None and row_of(p, key).get("lastReadSeq", 0) >= done.complete["seq"])
    assert changed["payload"]["reason"] == "read" and changed["payload"]["session"]["unreadCount"] == 0, changed
    assert entry(await operator.request("sessions.list"), key)["unreadCount"] == 0


async def test_marking_read_on_the_gateway_is_what_every_device_sees(relay_factory):
    relay, operator, _, done, key = await answered_on_discoclaw(relay_factory)
    newest = entry(await operator.request("sessions.list"), key)["lastSeq"]  # the answer's own seq
    marked = await operator.request("sessions.markRead", {"key": key, "seq": newest})
    assert marked["ok"] and marked["payload"]["unreadCount"] == 0, marked
    second, _ = await paired(relay, Identity())
    assert entry(await second.request("sessions.list"), key)["unreadCount"] == 0, "another operator device sees it read"


async def test_a_clawline_app_online_reads_what_it_shows_and_catches_up_on_reconnect(relay_factory):
    """The Clawline app shows every message it receives while connected (iOS keeps the socket only
    in the foreground), so what reaches it live or in its replay is read everywhere."""
    from conftest import auth, relay_of_one_user, send_and_complete
    cfg = dc.discoclaw_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay, admin = await relay_of_one_user(relay_factory, cfg)
    operator, _ = await paired(relay, Identity())

    phone, _ = await auth(relay, admin)
    online = await send_and_complete(phone, "while on screen")
    shown = await operator.event("sessions.changed", timeout=5, where=changed("main", unreadCount=0, lastMessagePreview="echo: while on screen"))
    assert shown["payload"]["session"]["lastReadSeq"] == shown["payload"]["session"]["lastSeq"], shown
    await phone.close()

    sent = await operator.request("chat.send", {"sessionKey": "main", "message": "while away", "idempotencyKey": "away-1"})
    await operator.event("chat", where=lambda p: p.get("state") == "final" and p.get("runId") == sent["payload"]["runId"])
    away = entry(await operator.request("sessions.list"), "main")
    assert away["unreadCount"] == 1, f"nobody has seen the answer: {away}"

    back, _ = await auth(relay, admin, last_message_id=online.final["id"])
    replayed = await back.recv_until(lambda f: f.get("type") == "message" and f.get("content") == "echo: while away")
    caught_up = await operator.event("sessions.changed", timeout=5, where=changed("main", lastReadSeq=away["lastSeq"]))
    assert caught_up["payload"]["session"]["unreadCount"] == 0, (caught_up, replayed)
