"""Read state follows the user across protocols: an answer a DiscoClaw app fetched is read on the
gateway too (unreadCount 0, `sessions.changed`), and the reverse."""
import discoclaw_client as dc
from discoclaw_client import app_decodes_everything  # noqa: F401  (autouse)
from gateway_client import Identity, paired


def shared_relay(relay_factory):
    cfg = dc.discoclaw_config(user_id="alice")
    cfg["gateway"] = {"listen": "127.0.0.1:0", "user_id": "alice"}
    return relay_factory(cfg)


def entry(listing: dict, key: str) -> dict:
    return next(s for s in listing["payload"]["sessions"] if s["key"] == key)


async def test_fetching_on_discoclaw_clears_the_gateway_unread_count(relay_factory):
    relay = shared_relay(relay_factory)
    operator, _ = await paired(relay, Identity())
    device = dc.register(relay)
    conversation = device.create_conversation("shared")
    sock = await dc.Socket.connect(relay, device.token)
    done = await dc.turn(device, sock, conversation["id"], "hello", dc.new_client_id())
    key = f"cv:{conversation['id']}"
    before = entry(await operator.request("sessions.list"), key)
    assert before["unreadCount"] == 1, f"the answer is unread; the user's own message is not: {before}"
    device.sync(0)  # the app fetches it
    changed = await operator.event(
        "sessions.changed", timeout=5, where=lambda p: p.get("key") == key and p.get("lastReadSeq", 0) >= done.complete["seq"])
    assert changed["payload"]["unreadCount"] == 0, changed
    assert entry(await operator.request("sessions.list"), key)["unreadCount"] == 0


async def test_marking_read_on_the_gateway_is_what_every_device_sees(relay_factory):
    relay = shared_relay(relay_factory)
    operator, _ = await paired(relay, Identity())
    device = dc.register(relay)
    conversation = device.create_conversation("shared")
    sock = await dc.Socket.connect(relay, device.token)
    done = await dc.turn(device, sock, conversation["id"], "hello", dc.new_client_id())
    key = f"cv:{conversation['id']}"
    marked = await operator.request("sessions.markRead", {"key": key, "seq": done.complete["seq"]})
    assert marked["ok"] and marked["payload"]["unreadCount"] == 0, marked
    second, _ = await paired(relay, Identity())
    assert entry(await second.request("sessions.list"), key)["unreadCount"] == 0, "another operator device sees it read"
